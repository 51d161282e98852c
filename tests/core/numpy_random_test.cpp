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

TEST(NumpyRandom, NegativeShapeIsAShapeError) {
  mha::NumpyRandomState rng(0);
  EXPECT_THROW(rng.randn(-1, 3), mha::shape_error);
  EXPECT_THROW(rng.randn(3, -2), mha::shape_error);
  EXPECT_EQ(rng.randn(0, 3).size(), 0);
}

}  // namespace
