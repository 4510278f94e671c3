// CUDA Graphs: stream capture and replay, graphs built node by node, and kernel launches added as kernel nodes.
#include "tle/Runtime/Runtime.h"

#include "CudaDriver.h"
#include "RuntimeState.h"

#include <fmt/format.h>

namespace tle::rt {

using namespace cu;

namespace {

/// The entry points of stream capture and replay.
const Api &graphApi() {
  const Api &a = api();
  if (!a.cuStreamBeginCapture || !a.cuStreamEndCapture || !a.cuGraphInstantiateWithFlags ||
      !a.cuGraphLaunch || !a.cuGraphExecDestroy || !a.cuGraphDestroy)
    throw Error("libtle_rt: the CUDA driver lacks the graph entry points (cuStreamBeginCapture_v2, "
                "cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch)");
  return a;
}

/// The entry points of graphs built node by node (CUDA 12.0+ for cuGraphAddKernelNode_v2).
const Api &buildApi() {
  const Api &a = api();
  if (!a.cuGraphCreate || !a.cuGraphAddKernelNode || !a.cuGraphAddEmptyNode || !a.cuGraphInstantiateWithFlags ||
      !a.cuGraphLaunch || !a.cuGraphExecDestroy || !a.cuGraphDestroy)
    throw Error("libtle_rt: the CUDA driver lacks the entry points that build graphs node by node "
                "(cuGraphCreate, cuGraphAddKernelNode_v2, cuGraphAddEmptyNode: CUDA 12.0 or newer)");
  return a;
}

/// Throws ArgumentError, naming `who`, for a null graph or a null dependency.
void checkGraphAndDeps(const std::string &who, CUgraph_st *graph, const GraphDeps &deps) {
  if (!graph)
    throw ArgumentError(fmt::format("{}: the graph is null (an empty or moved-from tle::rt::Graph?)", who));
  if (deps.count() && !deps.data())
    throw ArgumentError(fmt::format("{}: the dependency array is null", who));
  for (size_t i = 0; i < deps.count(); ++i)
    if (!deps.data()[i])
      throw ArgumentError(fmt::format("{}: dependency {} is a null node", who, i));
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Stream capture
// ---------------------------------------------------------------------------------------------

void Graph::beginCapture(Stream &stream) {
  const Api &a = graphApi();
  detail::ScopedContext scope(stream.device().state_->context);
  check(a.cuStreamBeginCapture(static_cast<CUstream>(stream.handle()), CU_STREAM_CAPTURE_MODE_GLOBAL),
        "cuStreamBeginCapture");
}

Graph Graph::endCapture(Stream &stream) {
  const Api &a = graphApi();
  detail::ScopedContext scope(stream.device().state_->context);
  Graph g;
  g.device_ = stream.device().state_;
  CUgraph graph = nullptr;
  check(a.cuStreamEndCapture(static_cast<CUstream>(stream.handle()), &graph), "cuStreamEndCapture");
  g.graph_ = graph;
  CUgraphExec exec = nullptr;
  check(a.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  g.exec_ = exec;
  return g;
}

// ---------------------------------------------------------------------------------------------
// Graphs built node by node
// ---------------------------------------------------------------------------------------------

Graph Graph::create(const Device &device) {
  const Api &a = buildApi();
  detail::ScopedContext scope(device.state_->context);
  Graph g;
  g.device_ = device.state_;
  CUgraph graph = nullptr;
  check(a.cuGraphCreate(&graph, 0), "cuGraphCreate");
  g.graph_ = graph;
  return g;
}

void Graph::instantiate() {
  if (!graph_)
    throw ArgumentError("Graph::instantiate: the graph is empty (made by Graph(), or moved from)");
  const Api &a = graphApi();
  detail::ScopedContext scope(device_->context);
  CUgraphExec exec = nullptr;
  check(a.cuGraphInstantiateWithFlags(&exec, static_cast<CUgraph>(graph_), 0), "cuGraphInstantiateWithFlags");
  if (exec_)
    a.cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  exec_ = exec;
}

Device Graph::device() const {
  if (!device_)
    throw ArgumentError("Graph::device: the graph is empty (made by Graph(), or moved from)");
  return Device(device_);
}

GraphNode addEmptyGraphNode(CUgraph_st *graph, GraphDeps deps) {
  checkGraphAndDeps("addEmptyGraphNode", graph, deps);
  const Api &a = api();
  if (!a.cuGraphAddEmptyNode)
    throw Error("libtle_rt: the CUDA driver lacks cuGraphAddEmptyNode");
  CUgraphNode node = nullptr;
  CUresult r = a.cuGraphAddEmptyNode(&node, graph, deps.data(), deps.count());
  if (r != CUDA_SUCCESS)
    fail("cuGraphAddEmptyNode", r, fmt::format("{} dependencies", deps.count()));
  return node;
}

// ---------------------------------------------------------------------------------------------
// Graph lifetime and replay
// ---------------------------------------------------------------------------------------------

Graph::~Graph() {
  if (!graph_)
    return;
  detail::ScopedContext scope(device_->context, std::nothrow);
  if (!scope.ok())
    return;
  if (exec_)
    api().cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  api().cuGraphDestroy(static_cast<CUgraph>(graph_));
}

Graph::Graph(Graph &&o) noexcept : device_(std::move(o.device_)), graph_(o.graph_), exec_(o.exec_) {
  o.graph_ = o.exec_ = nullptr;
}

Graph &Graph::operator=(Graph &&o) noexcept {
  if (this != &o) {
    Graph tmp(std::move(*this));
    device_ = std::move(o.device_);
    graph_ = o.graph_;
    exec_ = o.exec_;
    o.graph_ = o.exec_ = nullptr;
  }
  return *this;
}

void Graph::launch(Stream &stream) {
  if (!graph_)
    throw ArgumentError("Graph::launch: the graph is empty (made by Graph(), or moved from)");
  if (!exec_)
    throw ArgumentError("Graph::launch: the graph is not instantiated; call instantiate() after adding its nodes");
  if (stream.device().state_ != device_)
    throw ArgumentError(fmt::format("Graph::launch: the stream belongs to device {}, the graph to device {}",
                                    stream.device().ordinal(), device_->ordinal));
  detail::ScopedContext scope(device_->context);
  check(api().cuGraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(stream.handle())),
        "cuGraphLaunch");
}

// ---------------------------------------------------------------------------------------------
// Kernel nodes
// ---------------------------------------------------------------------------------------------

void Kernel::checkGraphDevice(const Graph &graph) const {
  if (graph.device_ && graph.device_ != module_->device.state_)
    throw ArgumentError(fmt::format("{}: the graph belongs to device {}, the kernel to device {}", info_.name,
                                    graph.device_->ordinal, module_->device.ordinal()));
}

GraphNode Kernel::addNodeRaw(Grid grid, CUgraph_st *graph, GraphDeps deps, void **args, size_t numArgs) const {
  checkRawArgs(args, numArgs);
  return addNodeChecked(grid, graph, deps, args, numArgs);
}

GraphNode Kernel::addNodeRaw(Grid grid, Graph &graph, GraphDeps deps, void **args, size_t numArgs) const {
  checkGraphDevice(graph);
  return addNodeRaw(grid, graph.graph(), deps, args, numArgs);
}

namespace {

/// Sets launch attribute `id` (cluster dimension or cooperative) of kernel node `node`; on failure
/// removes the node from its graph again and throws.
void setNodeAttribute(const Api &a, CUgraphNode node, int id, const CUlaunchAttributeValue &value,
                      const std::string &kernel) {
  const char *what = id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE ? "COOPERATIVE" : "CLUSTER_DIMENSION";
  if (!a.cuGraphKernelNodeSetAttribute || !a.cuGraphDestroyNode) {
    if (a.cuGraphDestroyNode)
      a.cuGraphDestroyNode(node);
    throw Error(fmt::format("{}: a graph node of a cluster or cooperative kernel needs "
                            "cuGraphKernelNodeSetAttribute, which the CUDA driver lacks",
                            kernel));
  }
  CUresult r = a.cuGraphKernelNodeSetAttribute(node, id, &value);
  if (r != CUDA_SUCCESS) {
    a.cuGraphDestroyNode(node);
    fail(fmt::format("cuGraphKernelNodeSetAttribute({}, {})", kernel, what), r);
  }
}

} // namespace

GraphNode Kernel::addNodeChecked(Grid grid, CUgraph_st *graph, GraphDeps deps, void **args, size_t numArgs) const {
  checkGraphAndDeps(info_.name, graph, deps);
  const Api &a = buildApi();
  detail::ScopedContext scope(module_->device.state_->context);
  std::vector<TensorMap> maps;
  std::vector<void *> withMaps;
  args = prepareLaunch(grid, args, numArgs, maps, withMaps);
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = static_cast<CUfunction>(function_);
  p.gridDimX = grid.x;
  p.gridDimY = grid.y;
  p.gridDimZ = grid.z;
  p.blockDimX = info_.block[0];
  p.blockDimY = info_.block[1];
  p.blockDimZ = info_.block[2];
  p.sharedMemBytes = info_.sharedBytes;
  p.kernelParams = args;
  CUgraphNode node = nullptr;
  CUresult r = a.cuGraphAddKernelNode(&node, graph, deps.data(), deps.count(), &p);
  if (r != CUDA_SUCCESS)
    fail(fmt::format("cuGraphAddKernelNode({})", info_.name), r,
         fmt::format("grid ({}, {}, {}), block ({}, {}, {}), {} bytes of dynamic shared memory, {} dependencies",
                     grid.x, grid.y, grid.z, info_.block[0], info_.block[1], info_.block[2], info_.sharedBytes,
                     deps.count()));
  if (info_.cluster != std::array<unsigned, 3>{1, 1, 1}) {
    CUlaunchAttributeValue v;
    std::memset(&v, 0, sizeof(v));
    v.clusterDim = {info_.cluster[0], info_.cluster[1], info_.cluster[2]};
    setNodeAttribute(a, node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, v, info_.name);
  }
  if (info_.cooperative) {
    CUlaunchAttributeValue v;
    std::memset(&v, 0, sizeof(v));
    v.cooperative = 1;
    setNodeAttribute(a, node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, v, info_.name);
  }
  return node;
}

} // namespace tle::rt
