// The packages attribution finds, with versions and the bytes each holds,
// and the CycloneDX SBOM made of them: package URLs per installer as the
// purl specification builds them, every package once, a document that is
// the same for the same image, and refused for a saved report.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "analysed_image.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

// A Debian image with apt's, pip's, npm's and a gem's packages.
Image mixed_image() {
  const std::string site = "usr/local/lib/python3.11/site-packages/";
  const std::string nm = "app/node_modules/";
  const std::string gems = "usr/local/bundle/";
  Image image;
  image.layers = {
      Layer{
          {file_with("usr/lib/os-release",
                     "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
                     "VERSION_ID=\"12\"\nID=debian\n"),
           soft_link("etc/os-release", "../usr/lib/os-release"),
           file_with("var/lib/dpkg/status",
                     "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\n"
                     "Version: 2.36-9+deb12u4\n\n"
                     "Package: tzdata\nStatus: install ok installed\nArchitecture: all\n"
                     "Version: 2024a-0+deb12u1\n\n"),
           file_with("var/lib/dpkg/info/libc6:amd64.list",
                     "/usr/lib/x86_64-linux-gnu/libc.so.6\n/usr/lib/x86_64-linux-gnu/libm.so.6\n"),
           file_with("var/lib/dpkg/info/tzdata.list", "/usr/share/zoneinfo/UTC\n"),
           file("usr/lib/x86_64-linux-gnu/libc.so.6", 2000),
           file("usr/lib/x86_64-linux-gnu/libm.so.6", 900), file("usr/share/zoneinfo/UTC", 114)},
          Encoding::None,
          true,
          "FROM debian:bookworm"},
      Layer{{file(site + "typing_extensions.py", 3000),
             file_with(site + "typing_extensions-4.9.0.dist-info/RECORD",
                       "typing_extensions.py,sha256=x,3000\n"
                       "typing_extensions-4.9.0.dist-info/RECORD,,\n"),
             file_with(nm + "@next/env/package.json",
                       R"({"name": "@next/env", "version": "14.0.4"})"),
             file(nm + "@next/env/dist/index.js", 700),
             file_with(nm + "left-pad/package.json", R"({"name": "left-pad", "version": "1.3.0"})"),
             file(nm + "left-pad/index.js", 300), file(gems + "gems/rack-3.0.8/lib/rack.rb", 4000),
             file(gems + "specifications/rack-3.0.8.gemspec", 300)},
            Encoding::Gzip,
            true,
            "RUN pip install typing_extensions && npm ci && bundle install"}};
  return image;
}

const InstalledPackage* package(const Attribution& a, const std::string& installer,
                                const std::string& name) {
  for (const auto& p : a.packages)
    if (p.installer == installer && p.name == name) return &p;
  return nullptr;
}

nlohmann::json sbom_of(const Analysed& a) {
  const GateResult gate;
  std::ostringstream out;
  render_cyclonedx(Report{a.analysis, &a.attribution, &a.findings, gate}, out);
  return nlohmann::json::parse(out.str());
}

}  // namespace

TEST_CASE("packages: every package a database lists, with its version, files and bytes") {
  const Analysed a(mixed_image());
  const auto* libc = package(a.attribution, "apt", "libc6");
  REQUIRE(libc != nullptr);
  CHECK(libc->version == "2.36-9+deb12u4");
  CHECK(libc->files == 2);
  CHECK(libc->bytes == 2900);
  const auto* tz = package(a.attribution, "apt", "tzdata");
  REQUIRE(tz != nullptr);
  CHECK(tz->bytes == 114);
  const auto* te = package(a.attribution, "pip", "typing_extensions");
  REQUIRE(te != nullptr);
  CHECK(te->version == "4.9.0");
  CHECK(te->bytes >= 3000);
  const auto* env = package(a.attribution, "npm", "@next/env");
  REQUIRE(env != nullptr);
  CHECK(env->version == "14.0.4");
  CHECK(env->bytes > 700);
  const auto* rack = package(a.attribution, "gem", "rack");
  REQUIRE(rack != nullptr);
  CHECK(rack->version == "3.0.8");
  CHECK(rack->bytes == 4300);
  // Each file counts for one package at most, so the packages' bytes are
  // at most the image's.
  std::uint64_t sum = 0;
  for (const auto& p : a.attribution.packages) sum += p.bytes;
  CHECK(sum <= a.analysis.final_bytes);
  // Sorted by installer, name and version, each once.
  for (std::size_t i = 1; i < a.attribution.packages.size(); ++i) {
    const auto& x = a.attribution.packages[i - 1];
    const auto& y = a.attribution.packages[i];
    CHECK(std::tie(x.installer, x.name, x.version) < std::tie(y.installer, y.name, y.version));
  }
}

TEST_CASE("sbom: CycloneDX with a package URL for each package") {
  const Analysed a(mixed_image());
  const auto doc = sbom_of(a);
  CHECK(doc["bomFormat"] == "CycloneDX");
  CHECK(doc["specVersion"] == "1.5");
  const std::string serial = doc["serialNumber"];
  CHECK(serial.size() == 45);
  CHECK(serial.starts_with("urn:uuid:"));
  CHECK(serial[23] == '5');  // the name-based layout
  CHECK(doc["metadata"]["component"]["type"] == "container");
  CHECK(doc["metadata"]["component"]["name"] == "test/image:1");
  std::map<std::string, nlohmann::json> by_purl;
  for (const auto& c : doc["components"])
    if (c.contains("purl")) by_purl[c["purl"]] = c;
  CHECK(by_purl.size() == a.attribution.packages.size());
  for (const std::string purl :
       {"pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64&distro=debian-12",
        "pkg:deb/debian/tzdata@2024a-0%2Bdeb12u1?arch=all&distro=debian-12",
        "pkg:pypi/typing-extensions@4.9.0", "pkg:npm/%40next/env@14.0.4", "pkg:npm/left-pad@1.3.0",
        "pkg:gem/rack@3.0.8"}) {
    CAPTURE(purl);
    CHECK(by_purl.contains(purl));
  }
  const auto& env = by_purl["pkg:npm/%40next/env@14.0.4"];
  CHECK(env["group"] == "@next");
  CHECK(env["name"] == "env");
  CHECK(env["version"] == "14.0.4");
  const auto& libc = by_purl["pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64&distro=debian-12"];
  CHECK(libc["properties"][0] ==
        nlohmann::json({{"name", "imgsmith:installer"}, {"value", "apt"}}));
  CHECK(libc["properties"][2] == nlohmann::json({{"name", "imgsmith:bytes"}, {"value", "2900"}}));
  const auto& system = doc["components"][0];
  CHECK(system["type"] == "operating-system");
  CHECK(system["name"] == "debian");
  CHECK(system["version"] == "12");
  // The same image, the same document.
  const Analysed again(mixed_image());
  CHECK(sbom_of(again) == doc);
}

TEST_CASE("sbom: package URLs per installer, encoded as the purl specification says") {
  const auto url = [](const std::string& installer, const std::string& name,
                      const std::string& version, const std::string& os = "",
                      const std::string& arch = "") {
    return package_url(InstalledPackage{installer, name, version, 0, 0, ""}, os,
                       os.empty() ? "" : "22.04", arch)
        .purl;
  };
  CHECK(url("apt", "libssl3", "3.0.2-0ubuntu1.15", "ubuntu", "amd64") ==
        "pkg:deb/ubuntu/libssl3@3.0.2-0ubuntu1.15?arch=amd64&distro=ubuntu-22.04");
  // An epoch's colon stays; '+' and '~' as the spec says; no os-release: Debian.
  CHECK(url("apt", "python3-numpy", "1:1.24.2-1+b1~x") ==
        "pkg:deb/debian/python3-numpy@1:1.24.2-1%2Bb1~x");
  CHECK(url("rpm", "openssl-libs", "3.0.7-27.el9", "rocky") ==
        "pkg:rpm/rocky/openssl-libs@3.0.7-27.el9?distro=rocky-22.04");
  CHECK(url("conda", "pytorch", "2.3.0") == "pkg:conda/pytorch@2.3.0");
  CHECK(url("pip", "Typing.Extensions__x", "4.9.0") == "pkg:pypi/typing-extensions-x@4.9.0");
  CHECK(url("pnpm", "@types/node", "20.1.0") == "pkg:npm/%40types/node@20.1.0");
  CHECK(url("yarn", "react", "18.2.0") == "pkg:npm/react@18.2.0");
  CHECK(url("gem", "nokogiri", "1.15.4") == "pkg:gem/nokogiri@1.15.4");
  CHECK(url("go", "github.com/prometheus/prometheus", "v2.48.0") ==
        "pkg:golang/github.com/prometheus/prometheus@v2.48.0");
  CHECK(url("go", "github.com/containers/skopeo/cmd/skopeo", "(devel)") ==
        "pkg:golang/github.com/containers/skopeo/cmd/skopeo");
  CHECK(url("go", "command-line-arguments", "") == "pkg:golang/command-line-arguments");
  CHECK(url("cargo", "ripgrep", "14.1.0") == "pkg:cargo/ripgrep@14.1.0");
  CHECK(url("pip", "odd name", "1.0 beta") == "pkg:pypi/odd%20name@1.0%20beta");
  const PackageUrl go =
      package_url(InstalledPackage{"go", "github.com/acme/server", "v1.2.3", 0, 0, ""}, "", "", "");
  CHECK(go.group == "github.com/acme");
  CHECK(go.name == "server");
}

TEST_CASE("sbom: a saved report has no package databases, and is refused") {
  const Analysed a(mixed_image());
  const GateResult gate;
  const SavedReport saved = report_from_json(nlohmann::json::parse(
      report_to_json(Report{a.analysis, &a.attribution, &a.findings, gate}).dump()));
  std::ostringstream out;
  CHECK_THROWS_WITH(render_cyclonedx(saved.view(), out),
                    Catch::Contains("cyclonedx needs the image itself"));
  CHECK(out.str().empty());
  // The JSON report lists the packages with their versions.
  const auto doc = report_to_json(Report{a.analysis, &a.attribution, &a.findings, gate});
  REQUIRE(doc.contains("packages"));
  bool found = false;
  for (const auto& p : doc["packages"])
    found |= p["installer"] == "gem" && p["name"] == "rack" && p["version"] == "3.0.8" &&
             p["bytes"] == 4300;
  CHECK(found);
}
