// eredu-inspect --devices: lists the CPU with its capabilities, and every other backend either
// with its devices or with one line saying why it has none. The tests hold on any machine: they
// require the CPU only and check the shape of whatever else is listed.

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "inspect_runner.hpp"

namespace eredu::testing {
namespace {

TEST(InspectDevices, JsonListsTheCpuAndEveryKnownBackendOnce) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const InspectRun run = run_inspect({"--devices", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_TRUE(doc["backends"].is_array());
  std::set<std::string> names;
  for (const auto& backend : doc["backends"]) {
    const std::string name = backend["backend"];
    EXPECT_TRUE(names.insert(name).second) << name << " listed twice";
    const std::string status = backend["status"];
    EXPECT_TRUE(status == "available" || status == "no_device" || status == "not_built") << status;
    if (status == "available") {
      EXPECT_FALSE(backend["devices"].empty()) << name;
    } else {
      EXPECT_TRUE(backend["devices"].empty()) << name;
      EXPECT_FALSE(backend["note"].get<std::string>().empty()) << name << ": says why";
    }
    for (const auto& device : backend["devices"]) {
      EXPECT_EQ(device["id"].get<std::string>().rfind(name + ":", 0), 0u) << device["id"];
      EXPECT_FALSE(device["name"].get<std::string>().empty());
      EXPECT_TRUE(device["usable"].is_boolean());
      if (!device["usable"].get<bool>()) {
        EXPECT_TRUE(device["unusable_reason"].is_string());
      }
      if (name == "vulkan") {
        for (const char* key :
             {"type", "api_version", "storage_buffer_16bit", "storage_buffer_8bit",
              "shader_float16", "subgroup_size", "subgroup_arithmetic", "heaps"}) {
          EXPECT_TRUE(device.contains(key)) << key;
        }
      }
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"cpu", "vulkan", "cuda"}));

  const auto& cpu = doc["backends"][0];
  ASSERT_EQ(cpu["backend"], "cpu");
  ASSERT_EQ(cpu["status"], "available");
  ASSERT_EQ(cpu["devices"].size(), 1u);
  const auto& device = cpu["devices"][0];
  EXPECT_EQ(device["id"], "cpu:0");
  EXPECT_TRUE(device["usable"].get<bool>());
  EXPECT_EQ(device["hardware_threads"].get<unsigned>(),
            std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_GT(device["memory_bytes"].get<std::uint64_t>(), 0u);
  // MemAvailable: positive, and never more than the machine has.
  EXPECT_GT(device["free_memory_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_LE(device["free_memory_bytes"].get<std::uint64_t>(),
            device["memory_bytes"].get<std::uint64_t>());
  const std::string kernels = device["kernels"];
  EXPECT_TRUE(kernels == "amx" || kernels == "avx512" || kernels == "avx2" || kernels == "generic")
      << kernels;
  // The AVX2 kernels run only where the CPU has AVX2, FMA and F16C; the AVX-512 ones need those
  // plus AVX-512 F/BW/VL/DQ + VNNI with the OS saving their state.
  if (kernels == "avx2" || kernels == "avx512" || kernels == "amx") {
    EXPECT_TRUE(device["avx2"].get<bool>() && device["fma"].get<bool>() &&
                device["f16c"].get<bool>());
  }
  if (kernels == "avx512" || kernels == "amx") {  // the AMX table is the AVX-512 one plus tiles
    EXPECT_TRUE(device["avx512f"].get<bool>() && device["avx512bw"].get<bool>() &&
                device["avx512vl"].get<bool>() && device["avx512dq"].get<bool>() &&
                device["avx512vnni"].get<bool>() && device["os_avx512_state"].get<bool>());
  }
  // Split 512-bit units are reported only for a CPU with AVX-512.
  if (device["avx512_split"].get<bool>()) {
    EXPECT_TRUE(device["avx512f"].get<bool>());
  }
  // The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled, read independently here.
  std::string expected_thp = "unavailable";
  if (std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled"); in) {
    std::string line;
    std::getline(in, line);
    const auto open = line.find('[');
    const auto close = line.find(']');
    if (open != std::string::npos && close != std::string::npos && close > open)
      expected_thp = line.substr(open + 1, close - open - 1);
  }
  EXPECT_EQ(device["transparent_huge_pages"], expected_thp);
  // The weights get huge pages only where the kernel can give them; where it can, before the load
  // writes them on bare metal and after it under a hypervisor (with EREDU_CPU_HUGE_PAGES unset).
  ASSERT_TRUE(device["hypervisor"].is_boolean());
  const std::string advice = device["weights_huge_pages"];
  if (expected_thp != "always" && expected_thp != "madvise") {
    EXPECT_EQ(advice, "none");
  } else if (std::getenv("EREDU_CPU_HUGE_PAGES") == nullptr && expected_thp == "madvise") {
    EXPECT_EQ(advice,
              device["hypervisor"].get<bool>() ? "after-first-write" : "before-first-write");
  }
  EXPECT_EQ(device["capabilities"], "exact_completion");
}

TEST(InspectDevices, TextHasOneHeaderLinePerBackendAndTheCpuDevice) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const InspectRun run = run_inspect({"--devices"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream in(run.out);
  std::string line;
  std::vector<std::string> headers;
  bool cpu_device = false, cpu_usable = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') headers.push_back(line.substr(0, line.find(':')));
    if (line.rfind("  cpu:0  ", 0) == 0) cpu_device = true;
    if (cpu_device && !cpu_usable && line == "    usable: yes") cpu_usable = true;
  }
  EXPECT_EQ(headers, (std::vector<std::string>{"cpu", "vulkan", "cuda"})) << run.out;
  EXPECT_NE(run.out.find("cpu: 1 device\n"), std::string::npos) << run.out;
  EXPECT_TRUE(cpu_device) << run.out;
  EXPECT_TRUE(cpu_usable) << run.out;
  EXPECT_NE(run.out.find("    kernels: "), std::string::npos);
}

// Sets an environment variable for the scope (the child inherits it), restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(InspectDevices, NoVulkanDriverIsALineInTheListingNotAFailure) {
  EREDU_REQUIRE_INSPECT_BINARY();
  // The loader reads only these driver manifests (both spellings: old and new loaders).
  const ScopedEnv icd("VK_ICD_FILENAMES", "/nonexistent/eredu-no-driver.json");
  const ScopedEnv drivers("VK_DRIVER_FILES", "/nonexistent/eredu-no-driver.json");
  const InspectRun run = run_inspect({"--devices", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  bool seen = false;
  for (const auto& backend : doc["backends"]) {
    if (backend["backend"] != "vulkan") continue;
    seen = true;
    EXPECT_NE(backend["status"], "available");
    EXPECT_TRUE(backend["devices"].empty());
    EXPECT_FALSE(backend["note"].get<std::string>().empty());
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(doc["backends"][0]["status"], "available") << "the CPU is still listed";
}

TEST(InspectDevices, DevicesWithAPathIsAUsageError) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const InspectRun run = run_inspect({"--devices", "model.gguf"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(line_count(run.err), 1u) << run.err;
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace eredu::testing
