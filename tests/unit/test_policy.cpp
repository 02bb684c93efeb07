#include <catch2/catch.hpp>

#include "image_builder.hpp"
#include "imgsmith/util/error.hpp"
#include "policy.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

TEST_CASE("policy: every setting is read, relative paths resolve beside the file") {
  TempDir tmp;
  write_file(tmp / "proj/imgsmith.toml", R"(
[analyze]
max-size = "8GB"
max-wasted = "10%"
min-efficiency = 0.9
max-user-wasted-percent = 0.25
dive-ci = ".dive-ci"
rules = "rules/extra.json"
deny = ["devel-in-final", "pip-cache"]
ignore = ["/opt/models/**"]
gpus = ["H100", "L4"]

[analyze.budget]
cuda = "3GiB"
"cuda/cudnn" = "1GiB"

[diff]
max-growth = "5%"
)");
  const Policy p = load_policy(tmp / "proj/imgsmith.toml");
  CHECK(p.max_size == "8GB");
  CHECK(p.max_wasted == "10%");
  CHECK(p.min_efficiency == 0.9);
  CHECK(p.max_user_wasted_percent == 0.25);
  CHECK(p.dive_ci == tmp / "proj/.dive-ci");
  CHECK(p.rules == tmp / "proj/rules/extra.json");
  CHECK(p.deny == std::vector<std::string>{"devel-in-final", "pip-cache"});
  CHECK(p.ignore == std::vector<std::string>{"/opt/models/**"});
  CHECK(p.gpus == std::vector<std::string>{"H100", "L4"});
  REQUIRE(p.budgets.size() == 2);
  CHECK(p.max_growth == "5%");
}

TEST_CASE("policy: found from a subdirectory upward") {
  TempDir tmp;
  write_file(tmp / "proj/imgsmith.toml", "[analyze]\nmax-size = \"1GB\"\n");
  write_file(tmp / "proj/src/deep/file.txt", "");
  CHECK(find_policy(tmp / "proj/src/deep") == tmp / "proj/imgsmith.toml");
  CHECK(find_policy(tmp / "proj") == tmp / "proj/imgsmith.toml");
}

TEST_CASE("policy: bad TOML, unknown keys and wrong types name the file and line") {
  TempDir tmp;
  write_file(tmp / "a.toml", "[analyze]\nmax-size = \n");
  CHECK_THROWS_WITH(load_policy(tmp / "a.toml"), Catch::Contains("a.toml:2"));
  write_file(tmp / "b.toml", "[analyze]\nmax-sise = \"1GB\"\n");
  CHECK_THROWS_WITH(load_policy(tmp / "b.toml"),
                    Catch::Contains("b.toml:2") && Catch::Contains("max-sise"));
  write_file(tmp / "c.toml", "[analyze]\ndeny = \"devel-in-final\"\n");
  CHECK_THROWS_WITH(load_policy(tmp / "c.toml"), Catch::Contains("list of strings"));
  write_file(tmp / "d.toml", "[build]\nx = 1\n");
  CHECK_THROWS_WITH(load_policy(tmp / "d.toml"), Catch::Contains("unknown section [build]"));
  CHECK_THROWS_AS(load_policy(tmp / "missing.toml"), InputError);
}
