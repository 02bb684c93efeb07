#include <catch2/catch.hpp>

#include "imgsmith/util/size.hpp"

using imgsmith::format_count;
using imgsmith::format_size;
using imgsmith::parse_percent;
using imgsmith::parse_size;

TEST_CASE("sizes: decimal units are powers of 1000, binary units powers of 1024") {
  CHECK(parse_size("1234") == 1234u);
  CHECK(parse_size("20MB") == 20000000u);
  CHECK(parse_size("20Mb") == 20000000u);  // dive and Docker read b as bytes
  CHECK(parse_size("50kB") == 50000u);
  CHECK(parse_size("1B") == 1u);
  CHECK(parse_size("1.5GiB") == 1610612736u);
  CHECK(parse_size("3 GiB") == 3221225472u);
  CHECK(parse_size("2G") == 2000000000u);
  CHECK(parse_size("512Ki") == 524288u);
  CHECK(parse_size(" 7 ") == 7u);
}

TEST_CASE("sizes: malformed, negative and overflowing sizes are refused") {
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("MB"));
  CHECK_FALSE(parse_size("-5MB"));
  CHECK_FALSE(parse_size("12 parsecs"));
  CHECK_FALSE(parse_size("1.2.3"));
  CHECK_FALSE(parse_size("99999999999TB"));
}

TEST_CASE("sizes: percentages are 0 to 100 with a % sign") {
  CHECK(parse_percent("10%") == 10.0);
  CHECK(parse_percent("2.5 %") == 2.5);
  CHECK_FALSE(parse_percent("10"));
  CHECK_FALSE(parse_percent("101%"));
  CHECK_FALSE(parse_percent("ten%"));
}

TEST_CASE("sizes: formatting uses decimal units and groups digits") {
  CHECK(format_size(999) == "999 B");
  CHECK(format_size(1220598) == "1.22 MB");
  CHECK(format_size(1000) == "1.00 kB");
  CHECK(format_count(1220598) == "1,220,598");
  CHECK(format_count(999) == "999");
  CHECK(format_count(1000) == "1,000");
  CHECK(format_count(0) == "0");
}
