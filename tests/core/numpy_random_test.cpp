// mha::NumpyRandomState against numpy's legacy RandomState (tests/fixtures/numpy_random.json).
// numpy's draws are IEEE double computations (53-bit uniforms, Marsaglia polar method with
// log/sqrt from the C library), so equality is expected bit for bit. The fixture script checked
// the same values against an independent pure-Python MT19937 + polar method, with Python's libm.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fixture_util.hpp"
#include "mha/numpy_random.hpp"

namespace {

using mha_test::json;
using mha_test::load_fixture;

const json& fixture() {
  static const json doc = load_fixture("numpy_random.json");
  return doc;
}

std::uint32_t seed_of(const json& s) {
  return static_cast<std::uint32_t>(s.at("seed").get<std::uint64_t>());
}

TEST(NumpyRandom, FixtureHasTheFourSeeds) {
  std::vector<std::uint64_t> seeds;
  for (const auto& s : fixture().at("streams")) seeds.push_back(s.at("seed").get<std::uint64_t>());
  EXPECT_EQ(seeds, (std::vector<std::uint64_t>{0, 7, 42, 4294967295ULL}));
}

TEST(NumpyRandom, RawMt19937OutputsEqualNumpy) {
  for (const auto& s : fixture().at("streams")) {
    mha::NumpyRandomState rng(seed_of(s));
    const auto& raw = s.at("raw_uint32");
    ASSERT_EQ(raw.size(), 8u);
    for (std::size_t i = 0; i < raw.size(); ++i)
      EXPECT_EQ(rng.next_uint32(), raw[i].get<std::uint32_t>())
          << "seed " << seed_of(s) << " draw " << i;
  }
}

TEST(NumpyRandom, RandnEqualsNumpyBitForBit) {
  for (const auto& s : fixture().at("streams")) {
    const auto expected = mha_test::flat(s.at("randn"));
    ASSERT_EQ(expected.size(), 64u);
    mha::NumpyRandomState rng(seed_of(s));
    for (std::size_t i = 0; i < expected.size(); ++i)
      // Exact: same arithmetic as numpy's legacy_gauss, same libm (glibc) log and sqrt.
      EXPECT_EQ(rng.standard_normal(), expected[i]) << "seed " << seed_of(s) << " draw " << i;
  }
}

TEST(NumpyRandom, RandnMatrixIsRowMajorDraws) {
  for (const auto& s : fixture().at("streams")) {
    const auto expected = mha_test::flat(s.at("randn"));
    mha::NumpyRandomState rng(seed_of(s));
    const mha::RowMatrixXd m = rng.randn(8, 8);
    ASSERT_EQ(m.rows(), 8);
    ASSERT_EQ(m.cols(), 8);
    for (mha::Index r = 0; r < 8; ++r)
      for (mha::Index c = 0; c < 8; ++c)
        EXPECT_EQ(m(r, c), expected[static_cast<std::size_t>(r * 8 + c)]) << "seed " << seed_of(s);
  }
}

TEST(NumpyRandom, RandomSampleEqualsNumpyBitForBit) {
  for (const auto& s : fixture().at("streams")) {
    const auto expected = mha_test::flat(s.at("random_sample"));
    ASSERT_EQ(expected.size(), 8u);
    mha::NumpyRandomState rng(seed_of(s));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double u = rng.random_sample();
      EXPECT_EQ(u, expected[i]) << "seed " << seed_of(s) << " draw "
                                << i;  // exact: 53-bit integer / 2^53
      EXPECT_GE(u, 0.0);
      EXPECT_LT(u, 1.0);
    }
  }
}

TEST(NumpyRandom, ReseedRestartsTheStreamAndDropsTheCachedGaussian) {
  const json& s = fixture().at("streams").at(1);  // seed 7
  const auto expected = mha_test::flat(s.at("randn"));
  mha::NumpyRandomState rng(12345);
  rng.standard_normal();  // leaves a cached second Gaussian behind
  rng.seed(seed_of(s));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(rng.standard_normal(), expected[i]) << i;
}

TEST(NumpyRandom, InterleavedCallsKeepTheCachedGaussian) {
  for (const auto& c : fixture().at("interleaved")) {
    mha::NumpyRandomState rng(seed_of(c));
    const auto& calls = c.at("calls");
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const auto expected = mha_test::flat(c.at("values").at(k));
      const std::string op = calls[k].at("op").get<std::string>();
      const auto shape = calls[k].at("shape");
      std::vector<double> got;
      if (op == "randn") {
        const mha::Index rows = shape.size() == 2 ? shape[0].get<mha::Index>() : 1;
        const mha::Index cols =
            shape.size() == 2 ? shape[1].get<mha::Index>() : shape[0].get<mha::Index>();
        const mha::RowMatrixXd m = rng.randn(rows, cols);
        got.assign(m.data(), m.data() + m.size());
      } else {
        for (std::size_t i = 0; i < expected.size(); ++i) got.push_back(rng.random_sample());
      }
      EXPECT_EQ(got, expected) << c.at("name").get<std::string>() << " call " << k;
    }
  }
}

/// MT19937 as numpy's mt19937_gen writes it (one loop, indices modulo 624) and init_genrand: the
/// plain reference of NumpyRandomState's regeneration, which runs in three loops without a modulo.
class PlainMt19937 {
 public:
  explicit PlainMt19937(std::uint32_t seed) {
    mt_[0] = seed;
    for (std::uint32_t i = 1; i < 624; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  }
  std::uint32_t next() {
    if (pos_ == 624) {
      for (std::size_t i = 0; i < 624; ++i) {
        const std::uint32_t y = (mt_[i] & 0x80000000U) | (mt_[(i + 1) % 624] & 0x7fffffffU);
        mt_[i] = mt_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1U) != 0 ? 0x9908b0dfU : 0U);
      }
      pos_ = 0;
    }
    std::uint32_t y = mt_[pos_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    return y ^ (y >> 18);
  }

 private:
  std::uint32_t mt_[624];
  std::size_t pos_ = 624;
};

TEST(NumpyRandom, RawOutputsEqualThePlainMt19937OverManyRegenerations) {
  // The fixture's 8 words per seed lie within the first regeneration; 10 regenerations (6240
  // words) take every word of the state through both of the fast form's loops and the last word's
  // wrap-around, several times.
  for (const std::uint32_t seed : {0U, 7U, 42U, 4294967295U}) {
    mha::NumpyRandomState rng(seed);
    PlainMt19937 plain(seed);
    for (int i = 0; i < 10 * mha::NumpyRandomState::kStateLen; ++i) {
      ASSERT_EQ(rng.next_uint32(), plain.next()) << "seed " << seed << " word " << i;
    }
  }
}

TEST(NumpyRandom, StandardNormalsEqualsOneCallPerDraw) {
  // Odd and even counts, in turn: a call that starts with a cached second variate, and one that
  // leaves one behind, give what one standard_normal() per draw gives.
  for (const std::uint32_t seed : {0U, 7U, 4294967295U}) {
    mha::NumpyRandomState bulk(seed), single(seed);
    for (const mha::Index count : {1, 2, 7, 0, 4, 1000, 3, 1}) {
      std::vector<double> got(static_cast<std::size_t>(count));
      bulk.standard_normals(got.data(), count);
      for (mha::Index i = 0; i < count; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], single.standard_normal())
            << "seed " << seed << " count " << count << " draw " << i;
      }
    }
    EXPECT_EQ(bulk.standard_normal(), single.standard_normal()) << "the states still agree";
  }
}

TEST(NumpyRandom, NegativeShapeIsAShapeError) {
  mha::NumpyRandomState rng(0);
  EXPECT_THROW(rng.randn(-1, 3), mha::shape_error);
  EXPECT_THROW(rng.randn(3, -2), mha::shape_error);
  EXPECT_EQ(rng.randn(0, 3).size(), 0);
}

}  // namespace
