// ByteWriter/ByteReader: empty vectors and matrices round-trip without handing memcpy a null
// pointer (UBSan found that in threshold's outcome bytes), and counts read from a file are
// checked against the bytes left before anything is allocated. Field lists (ByteFields) write
// the bytes the explicit calls would, and read them back.
#include "ltsim/core/bytes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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

struct Inner {
  int a = 0;
  std::vector<double> values;
};

struct Dealt {
  std::uint64_t seed = 0;
  bool flag = false;
  std::string name;
  std::optional<Inner> inner;
  std::vector<Inner> inners;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> steps;
  std::map<std::string, double> constants;
  Matrix m;
  Vector v;
  double not_dealt = 0.0;  // left out of the field list: never written, never read
};

// Field lists live in their struct's namespace (found by argument-dependent lookup).
template <typename Visit, FieldsOf<Inner> Self>
void ByteFields(Visit& visit, Self& s) {
  visit(s.a, s.values);
}
template <typename Visit, FieldsOf<Dealt> Self>
void ByteFields(Visit& visit, Self& s) {
  visit(s.seed, s.flag, s.name, s.inner, s.inners, s.steps, s.constants, s.m, s.v);
}

Dealt Example() {
  Dealt d;
  d.seed = 0x0123456789abcdefULL;
  d.flag = true;
  d.name = "pair";
  d.inner = Inner{7, {0.5}};
  d.inners = {Inner{1, {}}, Inner{-2, {1.0, 2.0}}};
  d.steps = {{100, 7}, {200, 9}};
  d.constants = {{"C", 1.25}, {"eps", 0.05}};
  d.m = Matrix::Identity(2, 3);
  d.v = Vector::Ones(2);
  d.not_dealt = 3.0;
  return d;
}

// The field list writes exactly what the hand-written sequence of ByteWriter calls it replaced
// wrote: the byte forms of dealt items and shards do not change.
TEST(ByteFields, WriteTheSameBytesAsTheExplicitCalls) {
  const Dealt d = Example();
  ByteWriter listed;
  PutFields(listed, d);
  ByteWriter w;
  w.Put(d.seed);
  w.Put(d.flag);
  w.PutString(d.name);
  w.Put<bool>(true);
  w.Put(d.inner->a);
  w.PutVector(d.inner->values);
  w.Put<std::uint64_t>(d.inners.size());
  for (const Inner& i : d.inners) {
    w.Put(i.a);
    w.PutVector(i.values);
  }
  w.Put<std::uint64_t>(d.steps.size());
  for (const auto& [length, needed] : d.steps) {
    w.Put(length);
    w.Put(needed);
  }
  w.Put<std::uint64_t>(d.constants.size());
  for (const auto& [name, value] : d.constants) {
    w.PutString(name);
    w.Put(value);
  }
  w.PutMatrix(d.m);
  w.PutEigenVector(d.v);
  EXPECT_EQ(listed.Take(), w.Take());
}

TEST(ByteFields, RoundTripEveryKindAndLeaveUnlistedFieldsAlone) {
  const Dealt d = Example();
  ByteWriter w;
  PutFields(w, d);
  const std::string bytes = w.Take();
  ByteReader r(bytes);
  Dealt back;
  back.inner = Inner{99, {9.0}};  // overwritten by the decoded value
  GetFields(r, back);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(back.seed, d.seed);
  EXPECT_EQ(back.flag, d.flag);
  EXPECT_EQ(back.name, d.name);
  ASSERT_TRUE(back.inner.has_value());
  EXPECT_EQ(back.inner->a, 7);
  EXPECT_EQ(back.inner->values, d.inner->values);
  ASSERT_EQ(back.inners.size(), 2U);
  EXPECT_EQ(back.inners[1].a, -2);
  EXPECT_EQ(back.inners[1].values, d.inners[1].values);
  EXPECT_EQ(back.steps, d.steps);
  EXPECT_EQ(back.constants, d.constants);
  EXPECT_EQ(back.m, d.m);
  EXPECT_EQ(back.v, d.v);
  EXPECT_EQ(back.not_dealt, 0.0);

  Dealt empty;  // an absent optional is a flag 0 and reads back as absent
  ByteWriter we;
  PutFields(we, empty);
  const std::string empty_bytes = we.Take();
  ByteReader re(empty_bytes);
  GetFields(re, back);
  EXPECT_TRUE(re.done());
  EXPECT_FALSE(back.inner.has_value());
  EXPECT_TRUE(back.inners.empty());
  EXPECT_TRUE(back.constants.empty());
}

// A count of non-trivial elements read from a file is not trusted: elements are decoded one at
// a time, so a huge count ends at the buffer's end as truncation, and a flag byte that is not
// 0 or 1 is refused.
TEST(ByteFields, HugeCountsAndBadFlagsFromAFileAreInputErrors) {
  ByteWriter w;
  w.Put<std::uint64_t>(0);
  w.Put<bool>(false);
  w.PutString("x");
  w.Put<bool>(false);
  w.Put<std::uint64_t>(std::uint64_t{1} << 62);  // inners: a count far past the end
  w.Put<int>(1);
  const std::string bytes = w.Take();
  ByteReader r(bytes, "shard.bin");
  Dealt d;
  try {
    GetFields(r, d);
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "shard.bin: truncated");
  }
  std::string bad_flag(sizeof(std::uint64_t), '\0');
  bad_flag += '\x02';
  ByteReader rb(bad_flag, "shard.bin");
  try {
    GetFields(rb, d);
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "shard.bin: malformed (a flag that is neither 0 nor 1)");
  }
}

}  // namespace
}  // namespace ltsim
