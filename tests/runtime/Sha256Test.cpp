// SHA-256 of libtle_rt (the module cache's key) against the FIPS 180-2 test vectors and padding-boundary lengths.
#include "tle/Runtime/ModuleCache.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace tle::rt;

namespace {
std::string hexOf(const std::string &s) { return toHex(sha256(s.data(), s.size())); }
} // namespace

TEST_CASE("sha256: FIPS 180-2 test vectors", "[sha256]") {
  CHECK(hexOf("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hexOf("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(hexOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnop"
              "qrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(hexOf(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(sha256(nullptr, 0) == sha256("", 0));
}

TEST_CASE("sha256: lengths around the 64-byte block and padding boundaries", "[sha256]") {
  // Message bytes (7 i + 3) mod 256; expected digests from an independent implementation.
  struct Case {
    size_t length;
    const char *hex;
  } cases[] = {
      {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
      {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
      {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
      {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
      {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
      {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
      {127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07"},
      {128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"},
      {1000, "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371"},
  };
  for (const Case &c : cases) {
    std::vector<unsigned char> m(c.length);
    for (size_t i = 0; i < c.length; ++i)
      m[i] = static_cast<unsigned char>((i * 7 + 3) & 255);
    INFO("length " << c.length);
    CHECK(toHex(sha256(m.data(), m.size())) == c.hex);
  }
}
