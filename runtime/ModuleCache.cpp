// SHA-256 (FIPS 180-4) and the content-keyed, thread-safe ModuleCache.
#include "tle/Runtime/ModuleCache.h"
#include "ModuleImage.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace tle::rt {

// ---------------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4, section 6.2)
// ---------------------------------------------------------------------------------------------

namespace {

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (4.2.2).
constexpr uint32_t kRound[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

// The first 32 bits of the fractional parts of the square roots of the first 8 primes (5.3.3).
constexpr uint32_t kInitial[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                  0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};

inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into the hash state (6.2.2).
void compress(uint32_t h[8], const uint8_t *block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(block[4 * t]) << 24 | uint32_t(block[4 * t + 1]) << 16 |
           uint32_t(block[4 * t + 2]) << 8 | uint32_t(block[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t bigS1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = k + bigS1 + ch + kRound[t] + w[t];
    uint32_t bigS0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = bigS0 + maj;
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

} // namespace

Sha256Digest sha256(const void *data, size_t size) {
  uint32_t h[8];
  std::memcpy(h, kInitial, sizeof(h));
  const auto *p = static_cast<const uint8_t *>(data);
  size_t full = size / 64;
  for (size_t i = 0; i < full; ++i)
    compress(h, p + 64 * i);
  // Padding (5.1.1): 0x80, zeros, then the message length in bits as a 64-bit big-endian integer.
  uint8_t tail[128] = {};
  size_t rest = size - 64 * full;
  if (rest)
    std::memcpy(tail, p + 64 * full, rest);
  tail[rest] = 0x80;
  size_t tailBytes = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = uint64_t(size) * 8;
  for (int i = 0; i < 8; ++i)
    tail[tailBytes - 1 - i] = uint8_t(bits >> (8 * i));
  for (size_t off = 0; off < tailBytes; off += 64)
    compress(h, tail + off);
  Sha256Digest out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = uint8_t(h[i] >> (24 - 8 * j));
  return out;
}

std::string toHex(const Sha256Digest &digest) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (uint8_t b : digest) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// ModuleCache
// ---------------------------------------------------------------------------------------------

namespace {

/// (device ordinal, its CUcontext, image kind, SHA-256 of the bytes).
struct Key {
  int ordinal;
  const void *context;
  ImageKind kind;
  Sha256Digest digest;
  friend bool operator<(const Key &a, const Key &b) {
    return std::tie(a.ordinal, a.context, a.kind, a.digest) <
           std::tie(b.ordinal, b.context, b.kind, b.digest);
  }
};

Key makeKey(const Device &device, ImageKind kind, const void *data, size_t size) {
  return Key{device.ordinal(), device.context(), kind, sha256(data, size)};
}

/// One key's load: in flight until `module` is set; waiters block on `result`.
struct Entry {
  std::promise<Module> promise;
  std::shared_future<Module> result = promise.get_future().share();
  std::optional<Module> module;     // set once loaded and kept
  std::list<Key>::iterator lruPos;  // valid once loaded
};

} // namespace

struct ModuleCache::Impl {
  mutable std::mutex mutex;
  std::map<Key, std::shared_ptr<Entry>> entries; // loaded and in-flight
  std::list<Key> lru;                            // loaded entries, most recently used first
  size_t capacity = 0;
  ModuleCacheStats stats;

  // Removes `it` (under the lock); counts an eviction for loaded entries.
  void erase(std::map<Key, std::shared_ptr<Entry>>::iterator it) {
    if (it->second->module) {
      lru.erase(it->second->lruPos);
      ++stats.evictions;
    }
    entries.erase(it);
  }

  // Drops least recently used loaded entries beyond the capacity (under the lock).
  void trim() {
    while (capacity && lru.size() > capacity)
      erase(entries.find(lru.back()));
  }

};

ModuleCache::ModuleCache(size_t capacity) : impl_(std::make_unique<Impl>()) {
  impl_->capacity = capacity;
}

ModuleCache::~ModuleCache() = default;

ModuleCache &ModuleCache::global() {
  static ModuleCache *cache = new ModuleCache(0);
  return *cache;
}

Module ModuleCache::get(const Device &device, ImageKind kind, const void *data, size_t size,
                        std::string label) {
  bool binary = kind == ImageKind::Binary;
  if (label.empty())
    label = binary ? "<memory image>" : "<ptx text>";
  if (!data || size == 0)
    throw ArgumentError(fmt::format("ModuleCache::get: {} is {}", label, data ? "empty" : "null"));
  if (binary && !detail::isBinaryImage(data, size))
    throw ArgumentError(fmt::format(
        "ModuleCache::get: {} has neither the ELF nor the fatbin magic (use ImageKind::Ptx for PTX)",
        label));
  if (!binary && static_cast<const char *>(data)[size - 1] == '\0' && --size == 0)
    throw ArgumentError(fmt::format("ModuleCache::get: {} is empty", label));
  Key key = makeKey(device, kind, data, size);

  std::shared_ptr<Entry> entry;
  bool owner = false; // this call inserted the entry and loads it
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->entries.find(key);
    if (it != impl_->entries.end()) {
      entry = it->second;
      if (entry->module) {
        ++impl_->stats.hits;
        impl_->lru.splice(impl_->lru.begin(), impl_->lru, entry->lruPos);
        return *entry->module;
      }
      ++impl_->stats.joins;
    } else {
      entry = std::make_shared<Entry>();
      impl_->entries.emplace(key, entry);
      ++impl_->stats.misses;
      ++impl_->stats.loading;
      owner = true;
    }
  }
  if (!owner)
    return entry->result.get(); // the loader's Module, or its exception rethrown

  std::optional<Module> loaded;
  try {
    loaded = binary ? Module::fromImage(device, data, size, std::move(label))
                    : Module::fromPtx(device, std::string_view(static_cast<const char *>(data), size),
                                      std::move(label));
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      --impl_->stats.loading;
      ++impl_->stats.failures;
      auto it = impl_->entries.find(key);
      if (it != impl_->entries.end() && it->second == entry)
        impl_->entries.erase(it); // not cached: the next get loads again
    }
    entry->promise.set_exception(std::current_exception());
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    --impl_->stats.loading;
    auto it = impl_->entries.find(key);
    if (it != impl_->entries.end() && it->second == entry) { // not evicted while loading
      entry->module = *loaded;
      impl_->lru.push_front(key);
      entry->lruPos = impl_->lru.begin();
      impl_->trim();
    }
  }
  entry->promise.set_value(*loaded);
  return *loaded;
}

Module ModuleCache::getImage(const Device &device, const void *image, size_t size, std::string label) {
  return get(device, ImageKind::Binary, image, size, std::move(label));
}

Module ModuleCache::getPtx(const Device &device, std::string_view ptx, std::string label) {
  return get(device, ImageKind::Ptx, ptx.data(), ptx.size(), std::move(label));
}

Module ModuleCache::getFile(const Device &device, const std::string &path) {
  std::string bytes = detail::readModuleFile(path);
  ImageKind kind = detail::isBinaryImage(bytes.data(), bytes.size()) ? ImageKind::Binary : ImageKind::Ptx;
  return get(device, kind, bytes.data(), bytes.size(), path);
}

bool ModuleCache::contains(const Device &device, ImageKind kind, const void *data, size_t size) const {
  if (!data || size == 0)
    return false;
  if (kind == ImageKind::Ptx && static_cast<const char *>(data)[size - 1] == '\0')
    --size;
  Key key = makeKey(device, kind, data, size);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->entries.find(key);
  return it != impl_->entries.end() && it->second->module.has_value();
}

bool ModuleCache::evict(const Device &device, ImageKind kind, const void *data, size_t size) {
  if (!data || size == 0)
    return false;
  if (kind == ImageKind::Ptx && static_cast<const char *>(data)[size - 1] == '\0')
    --size;
  Key key = makeKey(device, kind, data, size);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end())
    return false;
  impl_->erase(it);
  return true;
}

size_t ModuleCache::evictDevice(const Device &device) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  size_t n = 0;
  for (auto it = impl_->entries.begin(); it != impl_->entries.end();) {
    auto next = std::next(it);
    if (it->first.ordinal == device.ordinal() && it->first.context == device.context()) {
      impl_->erase(it);
      ++n;
    }
    it = next;
  }
  return n;
}

size_t ModuleCache::clear() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  size_t n = impl_->entries.size();
  while (!impl_->entries.empty())
    impl_->erase(impl_->entries.begin());
  return n;
}

size_t ModuleCache::size() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lru.size();
}

size_t ModuleCache::capacity() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->capacity;
}

void ModuleCache::setCapacity(size_t capacity) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->capacity = capacity;
  impl_->trim();
}

ModuleCacheStats ModuleCache::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ModuleCacheStats s = impl_->stats;
  s.entries = impl_->lru.size();
  return s;
}

void ModuleCache::resetStats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  size_t loading = impl_->stats.loading;
  impl_->stats = ModuleCacheStats{};
  impl_->stats.loading = loading;
}

} // namespace tle::rt
