// The driver test double's CUDA graphs: stream capture, graphs built node by node (kernel and empty nodes, recorded for tests) and their replay.
//
// Stream capture (global mode): launches on a capturing stream are recorded with copies of their
// arguments (MockDriver.h, doLaunch) and become a chain of kernel nodes at cuStreamEndCapture; a
// module load or a blocking memset while any capture is active fails with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (MockCudaDriver.cpp). cuGraphCreate makes an empty graph;
// cuGraphAddKernelNode_v2 checks what the driver checks (a function, kernelParams and not extra, a
// grid of at least one block, at most 1024 threads, dependencies that are nodes of the graph),
// copies the argument bytes and records the node (mock_last_graph_node, mock_last_graph_node_arg);
// cuGraphKernelNodeSetAttribute records a cluster dimension or a cooperative launch on it.
// Instantiation copies the graph; cuGraphLaunch runs its kernel nodes in the order they were added
// (an order that respects every dependency, since a dependency exists before its dependents).
#include "MockDriver.h"

#include <cstdio>
#include <cstring>
#include <deque>

using namespace tle::mockcuda;

namespace {

struct MockGraph;

/// One node: a kernel launch (with its launch attributes) or an empty node.
struct MockNode {
  MockGraph *graph = nullptr;
  bool kernel = false;
  bool removed = false; ///< cuGraphDestroyNode
  CapturedLaunch launch{};
  std::vector<const MockNode *> deps;
  unsigned cluster[3] = {1, 1, 1};
  int cooperative = 0;
};

/// A graph, and also its executable (instantiation copies it). A deque keeps node addresses,
/// which are the CUgraphNode handles, stable as nodes are added.
struct MockGraph {
  std::deque<MockNode> nodes;
};

MockGraph *graphOf(CUgraph g) { return reinterpret_cast<MockGraph *>(g); }

/// True when `node` is a live node of `g`.
bool ownsNode(const MockGraph &g, CUgraphNode node) {
  for (const MockNode &n : g.nodes)
    if (reinterpret_cast<CUgraphNode>(const_cast<MockNode *>(&n)) == node)
      return !n.removed;
  return false;
}

} // namespace

/// The last kernel node added (cuGraphAddKernelNode_v2); read through mock_last_graph_node().
struct MockGraphNodeRecord {
  int adds;                  ///< kernel nodes added so far in the process
  void *graph;               ///< the CUgraph
  void *node;                ///< the new CUgraphNode
  char function[128];        ///< the kernel's entry symbol
  unsigned grid[3], block[3];
  unsigned shared;           ///< dynamic shared memory, bytes
  unsigned numArgs;          ///< argument values copied (the function's parameters)
  unsigned numDeps;          ///< dependencies
  void *deps[8];             ///< the first 8 dependencies
  unsigned cluster[3];       ///< the node's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (1, 1, 1 when unset)
  int cooperative;           ///< the node's CU_LAUNCH_ATTRIBUTE_COOPERATIVE
};
static MockGraphNodeRecord lastNode;

namespace {

/// Adds a node after `deps` to `g`; CUDA_ERROR_INVALID_VALUE when a dependency is not a node of it.
CUresult addNode(MockGraph &g, const CUgraphNode *deps, size_t numDeps, MockNode node, CUgraphNode *out) {
  if (numDeps && !deps)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numDeps; ++i) {
    if (!ownsNode(g, deps[i]))
      return CUDA_ERROR_INVALID_VALUE;
    node.deps.push_back(reinterpret_cast<const MockNode *>(deps[i]));
  }
  node.graph = &g;
  g.nodes.push_back(std::move(node));
  *out = reinterpret_cast<CUgraphNode>(&g.nodes.back());
  return CUDA_SUCCESS;
}

/// What cuGraphAddKernelNode_v2 checks of its parameters before adding the node.
CUresult checkKernelParams(const CUDA_KERNEL_NODE_PARAMS *p) {
  if (!p || !p->func || (p->kernelParams && p->extra))
    return CUDA_ERROR_INVALID_VALUE;
  const auto *f = reinterpret_cast<const MockFunction *>(p->func);
  if (!f->paramSizes.empty() && !p->kernelParams)
    return CUDA_ERROR_INVALID_VALUE;
  if (!p->gridDimX || !p->gridDimY || !p->gridDimZ || p->blockDimX * p->blockDimY * p->blockDimZ > 1024 ||
      int(p->sharedMemBytes) > f->maxDynamicShared)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

void record(CUgraph graph, CUgraphNode node, const MockNode &n, const CUgraphNode *deps, size_t numDeps) {
  const CapturedLaunch &c = n.launch;
  ++lastNode.adds;
  lastNode.graph = graph;
  lastNode.node = node;
  std::snprintf(lastNode.function, sizeof(lastNode.function), "%s",
                reinterpret_cast<const MockFunction *>(c.function)->name.c_str());
  for (int d = 0; d < 3; ++d) {
    lastNode.grid[d] = c.grid[d];
    lastNode.block[d] = c.block[d];
    lastNode.cluster[d] = 1;
  }
  lastNode.shared = c.shared;
  lastNode.numArgs = unsigned(c.args.size());
  lastNode.numDeps = unsigned(numDeps);
  std::memset(lastNode.deps, 0, sizeof(lastNode.deps));
  for (size_t i = 0; i < numDeps && i < 8; ++i)
    lastNode.deps[i] = deps[i];
  lastNode.cooperative = 0;
}

} // namespace

extern "C" {

/// The last kernel node added to a graph (the record is overwritten by the next one).
__attribute__((visibility("default"))) const MockGraphNodeRecord *mock_last_graph_node() { return &lastNode; }

/// Copies argument `index` of the last kernel node (up to `cap` bytes) to `out`; returns its size
/// in bytes, or -1 when there is no such node or argument.
__attribute__((visibility("default"))) long mock_last_graph_node_arg(int index, void *out, size_t cap) {
  std::lock_guard<std::mutex> lock(mutex);
  auto *n = reinterpret_cast<const MockNode *>(lastNode.node);
  if (!n || index < 0 || size_t(index) >= n->launch.args.size())
    return -1;
  const auto &a = n->launch.args[size_t(index)];
  std::memcpy(out, a.data(), a.size() < cap ? a.size() : cap);
  return long(a.size());
}

/// The live nodes of `graph` (a CUgraph), kernel and empty.
__attribute__((visibility("default"))) int mock_graph_node_count(void *graph) {
  std::lock_guard<std::mutex> lock(mutex);
  int n = 0;
  for (const MockNode &node : graphOf(static_cast<CUgraph>(graph))->nodes)
    n += !node.removed;
  return n;
}

CUresult cuStreamIsCapturing(CUstream s, int *status) {
  MOCK_INJECT("cuStreamIsCapturing");
  MockStream *ms = mockStream(s);
  *status = ms ? ms->capture : 0;
  return CUDA_SUCCESS;
}
CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
  MOCK_INJECT("cuStreamBeginCapture");
  MockStream *ms = mockStream(s);
  if (!ms || ms->capture || mode != CU_STREAM_CAPTURE_MODE_GLOBAL)
    return CUDA_ERROR_INVALID_VALUE; // the legacy stream cannot be captured
  std::lock_guard<std::mutex> lock(mutex);
  ms->capture = 1;
  ms->captured.clear();
  ++activeCaptures;
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph *graph) {
  MOCK_INJECT("cuStreamEndCapture");
  MockStream *ms = mockStream(s);
  if (!ms || !ms->capture)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  ms->capture = 0;
  --activeCaptures;
  auto *g = new MockGraph;
  CUgraphNode prev = nullptr; // the captured launches, each after the one before
  for (CapturedLaunch &c : ms->captured) {
    MockNode n;
    n.kernel = true;
    n.launch = std::move(c);
    addNode(*g, prev ? &prev : nullptr, prev ? 1 : 0, std::move(n), &prev);
  }
  ms->captured.clear();
  *graph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}
CUresult cuGraphCreate(CUgraph *graph, unsigned flags) {
  MOCK_INJECT("cuGraphCreate");
  if (!graph || flags)
    return CUDA_ERROR_INVALID_VALUE;
  *graph = reinterpret_cast<CUgraph>(new MockGraph);
  return CUDA_SUCCESS;
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t numDeps,
                                 const CUDA_KERNEL_NODE_PARAMS *p) {
  MOCK_INJECT("cuGraphAddKernelNode");
  if (!node || !graph)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = checkKernelParams(p))
    return r;
  const auto *f = reinterpret_cast<const MockFunction *>(p->func);
  MockNode n;
  n.kernel = true;
  n.launch = CapturedLaunch{p->func, {p->gridDimX, p->gridDimY, p->gridDimZ},
                            {p->blockDimX, p->blockDimY, p->blockDimZ}, p->sharedMemBytes, {}};
  for (size_t i = 0; i < f->paramSizes.size(); ++i) { // the driver copies the values now
    const auto *bytes = static_cast<const unsigned char *>(p->kernelParams[i]);
    n.launch.args.emplace_back(bytes, bytes + f->paramSizes[i]);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (CUresult r = addNode(*graphOf(graph), deps, numDeps, std::move(n), node))
    return r;
  record(graph, *node, *reinterpret_cast<MockNode *>(*node), deps, numDeps);
  return CUDA_SUCCESS;
}
CUresult cuGraphAddEmptyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t numDeps) {
  MOCK_INJECT("cuGraphAddEmptyNode");
  if (!node || !graph)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  return addNode(*graphOf(graph), deps, numDeps, MockNode{}, node);
}
CUresult cuGraphKernelNodeSetAttribute(CUgraphNode node, int attr, const CUlaunchAttributeValue *value) {
  MOCK_INJECT("cuGraphKernelNodeSetAttribute");
  auto *n = reinterpret_cast<MockNode *>(node);
  if (!n || !n->kernel || n->removed || !value)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  if (attr == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
    n->cluster[0] = value->clusterDim.x, n->cluster[1] = value->clusterDim.y, n->cluster[2] = value->clusterDim.z;
    for (int d = 0; d < 3; ++d)
      if (!n->cluster[d] || n->launch.grid[d] % n->cluster[d])
        return CUDA_ERROR_INVALID_VALUE;
  } else if (attr == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
    n->cooperative = value->cooperative;
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (lastNode.node == node) {
    std::memcpy(lastNode.cluster, n->cluster, sizeof(lastNode.cluster));
    lastNode.cooperative = n->cooperative;
  }
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroyNode(CUgraphNode node) {
  MOCK_INJECT("cuGraphDestroyNode");
  if (!node)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  reinterpret_cast<MockNode *>(node)->removed = true;
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  MOCK_INJECT("cuGraphInstantiateWithFlags");
  std::lock_guard<std::mutex> lock(mutex);
  *exec = reinterpret_cast<CUgraphExec>(new MockGraph(*graphOf(graph)));
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  MOCK_INJECT("cuGraphLaunch");
  std::vector<CapturedLaunch> launches; // taken under the lock; doLaunch takes it again
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const MockNode &n : reinterpret_cast<MockGraph *>(exec)->nodes)
      if (n.kernel && !n.removed)
        launches.push_back(n.launch);
  }
  for (CapturedLaunch &c : launches) {
    std::vector<void *> ptrs;
    for (auto &a : c.args)
      ptrs.push_back(a.data());
    if (CUresult r = doLaunch(c.function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                              c.shared, s, ptrs.data()))
      return r;
  }
  return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec exec) {
  MOCK_INJECT("cuGraphExecDestroy");
  delete reinterpret_cast<MockGraph *>(exec);
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph) {
  MOCK_INJECT("cuGraphDestroy");
  delete graphOf(graph);
  return CUDA_SUCCESS;
}

} // extern "C"
