"""Kernels as Python callables: JITKernel compiles a .tle kernel per specialisation and launches it
as kernel[grid](*args, **constexprs); ModuleKernel launches a kernel of an existing cubin/PTX."""
import os
import sys

from . import launch as _launch
from . import runtime
from .compiler import Compiler
from .errors import ArgumentError
from .metadata import kernel_metadata, read_module_metadata
from .params import find_kernel
from .specialize import bind, specialize

_LAUNCH_OPTIONS = ("num_warps", "num_stages", "stream")


_device_arch = {}


def default_arch(device):
    """$TLE_ARCH, else the architecture of `device` (default: torch's current device) as torch
    reports it (sm_90a for 9.x, sm_80 for 8.x; asked once per device), else sm_90a."""
    if os.environ.get("TLE_ARCH"):
        return os.environ["TLE_ARCH"]
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return "sm_90a"
    if device is None:
        device = torch.cuda.current_device()
    if device not in _device_arch:
        major, _ = torch.cuda.get_device_capability(device)
        _device_arch[device] = "sm_90a" if major >= 9 else "sm_80"
    return _device_arch[device]


class Launchable:
    """A compiled kernel: its module image, the kernel's metadata and, per device, the loaded kernel."""

    def __init__(self, image, kmeta, label):
        self.image, self.metadata, self.label = image, kmeta, label
        self._loaded = {}

    def loaded(self, device):
        """The runtime.LoadedKernel on `device` (loaded on first use)."""
        if device not in self._loaded:
            self._loaded[device] = runtime.LoadedKernel(self.image, self.metadata["name"], device, self.label)
        return self._loaded[device]

    def launch(self, grid, bound, stream=None, views=None):
        """Checks and packs `bound` {name: value} against the metadata (`views`: ArrayViews already
        made, by name), evaluates the grid and launches on the stream (see launch.stream_handle)
        of the tensors' device."""
        packed, views = _launch.pack_arguments(self.metadata, bound, views)
        meta = dict(self.metadata.get("constexprs", {}))
        meta.update(bound)
        meta.setdefault("num_warps", self.metadata.get("num_warps"))
        meta.setdefault("num_stages", self.metadata.get("num_stages"))
        dims = _launch.normalize_grid(grid, meta, self.metadata["name"])
        device = _launch.launch_device(views, bound)
        handle = _launch.stream_handle(stream, device, bound)
        if device is None:
            device = runtime.stream_device(handle)
        self.loaded(device).launch(dims, handle, packed)


class ModuleKernel(Launchable):
    """Kernel `name` (default: the module's only kernel) of a tlec cubin or PTX file, launched as
    `k[grid](*args)` with arguments in the order of its metadata's params (or by name)."""

    def __init__(self, path, name=None):
        with open(path, "rb") as f:
            image = f.read()
        super().__init__(image, kernel_metadata(read_module_metadata(image), name), path)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def run(self, *args, grid, stream=None, **kwargs):
        params = [p["name"] for p in self.metadata.get("params", [])]
        if len(args) + len(kwargs) != len(params):
            raise ArgumentError("%s expects %d arguments (%s) but was given %d"
                                % (self.metadata["name"], len(params), ", ".join(params), len(args) + len(kwargs)))
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params or k in bound:
                raise ArgumentError("%s: unexpected or repeated argument %r (parameters: %s)"
                                    % (self.metadata["name"], k, ", ".join(params)))
            bound[k] = v
        self.launch(grid, bound, stream)


class Specialization(Launchable):
    """One compiled specialisation of a JITKernel: signature, defines, options and the
    compiler.CompiledModule (module.path is the cached file)."""

    def __init__(self, module, name, signature, defines, options):
        super().__init__(module.image, kernel_metadata(module.metadata, name), module.path)
        self.module, self.signature, self.defines, self.options = module, signature, defines, options


class JITKernel:
    """Kernel `name` of a .tle / Triton .py source, compiled by tlec for each specialisation the
    calls need (cached on disk by content) and launched with `kernel[grid](*args, **constexprs)`.

    Keyword options: num_warps (default 4), num_stages (tlec's default when None), arch (default:
    default_arch()), include_dirs (tlec -I), debug, fp_fusion, output ("ptx" to skip ptxas),
    tlec (path), cache_dir. A call's keywords num_warps, num_stages and stream (a CUstream int or
    torch.cuda.Stream) are launch options unless the kernel has a parameter of that name."""

    def __init__(self, path, name=None, num_warps=4, num_stages=None, arch=None, include_dirs=(),
                 debug=False, fp_fusion=True, output=None, tlec=None, cache_dir=None):
        self.path = os.path.abspath(path)
        self.include_dirs = [os.path.abspath(d) for d in include_dirs]
        self.kdef = find_kernel(self.path, name, self.include_dirs)
        self.name = name or self.kdef.name
        self.options = {"num_warps": num_warps, "num_stages": num_stages, "arch": arch,
                        "include_dirs": self.include_dirs, "debug": debug, "fp_fusion": fp_fusion,
                        "output": output}
        self._tlec, self._cache_dir, self._compiler = tlec, cache_dir, None
        self._specs = {}

    @property
    def compiler(self):
        """The compiler.Compiler (tlec found and identified on first use)."""
        if self._compiler is None:
            self._compiler = Compiler(self._tlec, self._cache_dir)
        return self._compiler

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def _split(self, kwargs):
        options = {}
        for key in _LAUNCH_OPTIONS:
            if key in kwargs and self.kdef.param(key) is None:
                options[key] = kwargs.pop(key)
        return options

    def signature(self, *args, **kwargs):
        """(signature, defines) tlec would be given for this call (no compiling)."""
        self._split(kwargs)
        return specialize(self.kdef, bind(self.kdef, args, kwargs))

    def _options(self, launch_options, device):
        options = dict(self.options)
        for key in ("num_warps", "num_stages"):
            if launch_options.get(key) is not None:
                options[key] = launch_options[key]
        options["arch"] = options["arch"] or default_arch(device)
        return options

    def _specialization(self, bound, launch_options, views=None):
        signature, defines = specialize(self.kdef, bound, views)
        options = self._options(launch_options, None)
        key = (signature, tuple(sorted(defines.items())), tuple(sorted((k, repr(v)) for k, v in options.items())))
        spec = self._specs.get(key)
        if spec is None:
            module = self.compiler.compile(self.path, self.name, signature, defines, options)
            spec = self._specs[key] = Specialization(module, self.name, signature, defines, options)
        return spec

    def specialize(self, *args, **kwargs):
        """The Specialization this call would launch, compiled (or found in the cache), not launched."""
        options = self._split(kwargs)
        return self._specialization(bind(self.kdef, args, kwargs), options)

    def run(self, *args, grid, **kwargs):
        """Compiles (once per specialisation) and launches; see the class."""
        options = self._split(kwargs)
        bound = bind(self.kdef, args, kwargs)
        views = {}
        spec = self._specialization(bound, options, views)
        spec.launch(grid, bound, options.get("stream"), views=views)
        return spec


def jit(path, name=None, **options):
    """JITKernel(path, name, **options): kernel `name` of the .tle / Triton .py file `path`."""
    return JITKernel(path, name, **options)


def load(path, name=None):
    """ModuleKernel(path, name): kernel `name` of a tlec cubin or PTX file."""
    return ModuleKernel(path, name)
