"""A simulated GPU stream for the benchmark's CPU tests: the host queues work and pays its launch
cost, the GPU runs the work in order, no earlier than it was queued; CUDA events read the GPU's
clock, and a CUDA graph records the work queued while it is captured and replays it for one
launch. Enough of `torch.cuda` to time methods whose host costs differ."""

import contextlib
import types


class Gpu:
    """One stream's timeline, in microseconds."""

    def __init__(self):
        self.host = self.busy_until = 0.0
        self.capturing = None  # a graph's node list while it is captured

    def queue(self, gpu_us, host_us):
        if self.capturing is not None:
            self.capturing.append(gpu_us)
            return
        self.host += host_us
        self.busy_until = max(self.host, self.busy_until) + gpu_us

    def synchronize(self):
        self.host = max(self.host, self.busy_until)


def cuda(gpu, **more):
    """The simulated `torch.cuda` members over `gpu` (Event, CUDAGraph, graph, synchronize,
    current_stream, _sleep at a 1.5 GHz clock), with `more` added."""

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self, stream=None):
            gpu.host += 0.5
            self.t = gpu.busy_until = max(gpu.host, gpu.busy_until)

        def synchronize(self):
            gpu.host = max(gpu.host, self.t)

        def elapsed_time(self, end):
            return (end.t - self.t) / 1000.0

    class CUDAGraph:
        def __init__(self):
            self.nodes = []

        def replay(self):
            gpu.host += 4.0  # the graph's own launch
            for us in self.nodes:
                gpu.queue(us, 0.0)

    @contextlib.contextmanager
    def graph(g):
        gpu.capturing = g.nodes
        try:
            yield
        finally:
            gpu.capturing = None

    members = dict(Event=Event, CUDAGraph=CUDAGraph, graph=graph, synchronize=gpu.synchronize,
                   current_stream=lambda: types.SimpleNamespace(cuda_stream=0),
                   _sleep=lambda cycles: gpu.queue(cycles / 1500.0, 1.0))
    members.update(more)
    return members
