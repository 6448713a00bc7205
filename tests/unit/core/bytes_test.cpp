// ByteWriter/ByteReader: empty vectors and matrices round-trip without handing memcpy a null
// pointer (UBSan found that in threshold's outcome bytes), and counts read from a file are
// checked against the bytes left before anything is allocated.
#include "ltsim/core/bytes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

TEST(Bytes, EmptyAndFullValuesRoundTrip) {
  ByteWriter w;
  w.PutVector(std::vector<std::uint16_t>{});
  w.PutVector(std::vector<double>{1.5, -2.0});
  w.PutMatrix(Matrix(0, 3));
  w.PutMatrix(Matrix::Identity(2, 2));
  w.PutEigenVector(Vector(0));
  w.PutString("");
  const std::string bytes = w.Take();
  ByteReader r(bytes);
  EXPECT_TRUE(r.GetVector<std::uint16_t>().empty());
  EXPECT_EQ(r.GetVector<double>(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(r.GetMatrix().cols(), 3);
  EXPECT_EQ(r.GetMatrix(), Matrix::Identity(2, 2));
  EXPECT_EQ(r.GetEigenVector().size(), 0);
  EXPECT_EQ(r.GetString(), "");
  EXPECT_TRUE(r.done());
}

TEST(Bytes, HugeCountsFromAFileAreTruncationNotAllocation) {
  for (int kind = 0; kind < 3; ++kind) {
    ByteWriter w;
    if (kind == 2) w.Put<std::int64_t>(std::int64_t{1} << 40);  // rows of a matrix
    w.Put<std::uint64_t>(std::uint64_t{1} << 60);               // a count far past the end
    w.Put<double>(1.0);
    const std::string bytes = w.Take();
    ByteReader r(bytes, "shard.bin");
    try {
      if (kind == 0) r.GetVector<double>();
      if (kind == 1) r.GetEigenVector();
      if (kind == 2) r.GetMatrix();
      ADD_FAILURE() << "kind " << kind << " was read";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "shard.bin: truncated") << kind;
    }
  }
}

}  // namespace
}  // namespace ltsim
