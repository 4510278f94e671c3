; An LLVM IR raw function for tests/lit/raw/raw_paths.tle: *p *= 3.
define void @triple(ptr addrspace(1) %p) {
  %v = load float, ptr addrspace(1) %p
  %w = fmul float %v, 3.0
  store float %w, ptr addrspace(1) %p
  ret void
}
