// Checks that two ways of working out dive's figures agree, field by field,
// so a failure names the figure that differs.
#pragma once

#include <catch2/catch.hpp>

#include "imgsmith/analysis/dive_metrics.hpp"

namespace imgsmith::testing {

inline void check_same_dive_figures(const DiveFigures& got, const DiveFigures& want) {
  CHECK(got.efficiency == want.efficiency);
  CHECK(got.wasted_bytes == want.wasted_bytes);
  CHECK(got.user_wasted_percent == want.user_wasted_percent);
  CHECK(got.inefficient_total == want.inefficient_total);
  REQUIRE(got.inefficient.size() == want.inefficient.size());
  for (std::size_t i = 0; i < want.inefficient.size(); ++i) {
    INFO("inefficient path " << i);
    CHECK(got.inefficient[i].path == want.inefficient[i].path);
    CHECK(got.inefficient[i].cumulative_bytes == want.inefficient[i].cumulative_bytes);
    CHECK(got.inefficient[i].copies == want.inefficient[i].copies);
  }
}

}  // namespace imgsmith::testing
