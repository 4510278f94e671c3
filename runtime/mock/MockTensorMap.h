// The driver test double's record of its last cuTensorMapEncodeTiled call, shared by the double
// (which fills it) and the tests that read it through mock_last_tensor_map().
#pragma once

/// The arguments of the last cuTensorMapEncodeTiled call, as the driver received them (dims and
/// boxes innermost first; strides in bytes, without the innermost), and how many calls came.
struct MockTensorMapCall {
  int calls;
  void *tensorMap;
  int dataType;
  unsigned rank;
  void *globalAddress;
  unsigned long long globalDim[5];
  unsigned long long globalStrides[4];
  unsigned boxDim[5];
  unsigned elementStrides[5];
  int interleave, swizzle, l2Promotion, oobFill;
};
