"""Compiling a kernel with the installed tlec, and the on-disk cache of its modules keyed by the
content of (source, signature, constexprs, options, compiler)."""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from .errors import CompileError
from .metadata import read_module_metadata

_PTXAS_MISSING = "ptxas from the CUDA toolkit was not found"
_compiler_ids = {}


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _installed(name):
    """The path of installed file `name` ("tlec", "libtle_rt") next to an installed package."""
    try:
        from . import _install
    except ImportError:
        return None
    rel = getattr(_install, name.upper().replace("-", "_"), None)
    return os.path.normpath(os.path.join(_package_dir(), rel)) if rel else None


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_tlec(explicit=None):
    """The tlec to run: `explicit`, else $TLE_TLEC, else the one installed with this package, else
    `tlec` on PATH. Raises CompileError when an explicit or $TLE_TLEC path is not an executable,
    or saying where it looked when there is none."""
    for candidate, what in ((explicit, "tlec="), (os.environ.get("TLE_TLEC"), "TLE_TLEC")):
        if candidate:
            if not _executable(candidate):
                raise CompileError("%s names %s, which is not an executable" % (what, candidate))
            return os.path.abspath(candidate)
    installed = _installed("tlec")
    if installed and _executable(installed):
        return installed
    found = shutil.which("tlec")
    if found:
        return found
    raise CompileError("tlec not found: set TLE_TLEC, install the package with `cmake --install` "
                       "(it finds its own bin/tlec), or put tlec on PATH")


def compiler_id(tlec):
    """`tlec --version` and the SHA-256 of the executable, e.g. "tlec 0.1.0 3f2a...": a rebuilt
    compiler is a different compiler for the cache. Memoised per (path, size, mtime)."""
    st = os.stat(tlec)
    memo_key = (tlec, st.st_size, st.st_mtime_ns)
    if memo_key not in _compiler_ids:
        version = subprocess.run([tlec, "--version"], capture_output=True, text=True).stdout.strip()
        h = hashlib.sha256()
        with open(tlec, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _compiler_ids[memo_key] = "%s %s" % (version or "tlec", h.hexdigest()[:16])
    return _compiler_ids[memo_key]


def default_cache_dir():
    """$TLE_CACHE_DIR, else $XDG_CACHE_HOME/tle, else ~/.cache/tle."""
    if os.environ.get("TLE_CACHE_DIR"):
        return os.environ["TLE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tle")


def _sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cache_key(source, kernel, signature, defines, options, compiler):
    """The hex SHA-256 that names a compiled module: of the source bytes, the kernel name, the
    signature text, the -D values (a dict, order-free), the options (a dict: num_warps, arch, ...)
    and the compiler id. Pure: equal inputs give equal keys, any difference a different key."""
    doc = {"format": 1, "source": hashlib.sha256(source).hexdigest(), "kernel": kernel,
           "signature": signature, "defines": sorted((str(k), str(v)) for k, v in defines.items()),
           "options": sorted((str(k), repr(v)) for k, v in options.items()), "compiler": compiler}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _depfile_inputs(text):
    """The prerequisites of a Make-style depfile (backslash-newline continuations, '\\ ' escapes)."""
    body = text.replace("\\\n", " ")
    _, _, deps = body.partition(": ")
    out, cur, i = [], "", 0
    while i < len(deps):
        c = deps[i]
        if c == "\\" and i + 1 < len(deps) and deps[i + 1] in " #":
            cur += deps[i + 1]
            i += 2
            continue
        if c.isspace():
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        out.append(cur)
    return out


class CompiledModule:
    """A compiled module: path (the cached file), image (its bytes), kind ("cubin" or "ptx"),
    metadata (the whole __tle_metadata document), key (the cache key), hit (found in the cache)."""

    def __init__(self, path, image, kind, key, hit):
        self.path, self.image, self.kind, self.key, self.hit = path, image, kind, key, hit
        self.metadata = read_module_metadata(image)


class Compiler:
    """tlec plus the cache directory it compiles into (created on first use)."""

    def __init__(self, tlec=None, cache_dir=None):
        self.tlec = find_tlec(tlec)
        self.cache_dir = os.path.abspath(cache_dir or default_cache_dir())
        self.id = compiler_id(self.tlec)

    def command(self, source_path, kernel, signature, defines, options, output, depfile):
        """tlec's command line for one compilation (a list)."""
        cmd = [self.tlec, source_path]
        if kernel:
            cmd += ["-n", kernel]
        if signature is not None:
            cmd += ["-s", signature]
        for name, value in defines.items():
            cmd += ["-D", "%s=%s" % (name, value)]
        cmd += ["-w", str(options.get("num_warps", 4)), "--arch", options.get("arch", "sm_90a")]
        if options.get("num_stages") is not None:
            cmd += ["-ns", str(options["num_stages"])]
        for d in options.get("include_dirs", ()):
            cmd += ["-I", d]
        if options.get("debug"):
            cmd.append("--debug")
        if options.get("fp_fusion") is False:
            cmd.append("--no-fp-fusion")
        return cmd + ["-o", output, "-MF", depfile]

    def _entry_valid(self, entry, source_dir):
        try:
            with open(os.path.join(entry, "info.json")) as f:
                info = json.load(f)
            for rel, digest in info["deps"].items():
                if _sha256_file(os.path.join(source_dir, rel)) != digest:
                    return None
            return info
        except (OSError, ValueError, KeyError):
            return None

    def compile(self, source_path, kernel, signature, defines, options):
        """The CompiledModule for these inputs, from the cache when an entry exists whose imported
        modules are unchanged, else compiled by tlec (a cubin; PTX when ptxas is missing, or when
        options["output"] is "ptx") and stored. Raises CompileError with tlec's diagnostics."""
        source_path = os.path.abspath(source_path)
        with open(source_path, "rb") as f:
            source = f.read()
        key = cache_key(source, kernel, signature, defines, options, self.id)
        entry = os.path.join(self.cache_dir, key[:2], key)
        source_dir = os.path.dirname(source_path)
        info = self._entry_valid(entry, source_dir)
        if info is not None:
            path = os.path.join(entry, info["file"])
            with open(path, "rb") as f:
                return CompiledModule(path, f.read(), info["kind"], key, True)
        return self._compile_into(entry, source_path, source_dir, kernel, signature, defines, options, key)

    def _run_tlec(self, tmp, source_path, kernel, signature, defines, options):
        kinds = ["ptx"] if options.get("output") == "ptx" else ["cubin", "ptx"]
        for kind in kinds:
            out = os.path.join(tmp, "module." + kind)
            cmd = self.command(source_path, kernel, signature, defines, options, out, os.path.join(tmp, "module.d"))
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode == 0:
                return kind, out
            if kind == "cubin" and _PTXAS_MISSING in proc.stderr and options.get("output") is None:
                continue
            raise CompileError((proc.stderr or proc.stdout).strip() or "tlec exited with status %d" % proc.returncode, cmd)
        raise CompileError("tlec produced no module")  # not reached

    def _compile_into(self, entry, source_path, source_dir, kernel, signature, defines, options, key):
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=os.path.dirname(entry))
        try:
            kind, out = self._run_tlec(tmp, source_path, kernel, signature, defines, options)
            with open(os.path.join(tmp, "module.d")) as f:
                deps = [d for d in _depfile_inputs(f.read()) if os.path.abspath(d) != source_path]
            info = {"file": "module." + kind, "kind": kind, "signature": signature, "kernel": kernel,
                    "deps": {os.path.relpath(os.path.abspath(d), source_dir): _sha256_file(d) for d in deps}}
            with open(os.path.join(tmp, "info.json"), "w") as f:
                json.dump(info, f, indent=1, sort_keys=True)
            with open(out, "rb") as f:
                image = f.read()
            if os.path.isdir(entry):
                shutil.rmtree(entry, ignore_errors=True)  # stale: an imported module changed
            try:
                os.rename(tmp, entry)
            except OSError:  # another process stored the same key first: its bytes are ours
                pass
            path = os.path.join(entry, "module." + kind)
            return CompiledModule(path if os.path.exists(path) else out, image, kind, key, False)
        finally:
            if os.path.isdir(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
