// ExecutionPlan JSON (schema 1): the writer's output equals a hand-written document, reading it
// back gives the same plan, and every malformed field is rejected with an error naming it.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include <unistd.h>

#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/execution_plan_json.hpp"

namespace eredu::plan {
namespace {

using nlohmann::json;

ExecutionPlan full_plan() {
  return ExecutionPlan::create(
             DevicePlan::create(BackendId::create("cuda").value(), "cuda:1").value(),
             ExecutionPlanOptions{
                 .drafting = DraftingPlan::external("draft.gguf").value(),
                 .required_device_capabilities = {.exact_completion = true, .collectives = true},
                 .required_session_capabilities = {.persistent_cache = true,
                                                   .activation_inspection = true},
                 .max_cached_shards = 7,
                 .session = {.context_length = 2048,
                             .kv_cache_type = KvCacheType::kF32,
                             .threads = 3},
                 .memory_budget_bytes = 1ull << 33})
      .value();
}

// The minimal valid document; tests change one field of it.
json minimal() {
  return json::parse(R"({"schema_version": 1, "device": {"backend": "cpu", "device": "cpu:0"}})");
}

void expect_field_error(const json& document, ErrorCode code, const std::string& field) {
  const Result<ExecutionPlan> plan = execution_plan_from_json(document);
  ASSERT_FALSE(plan.has_value()) << document.dump();
  EXPECT_EQ(plan.error().code(), code) << plan.error().what();
  EXPECT_EQ(plan.error().subject(), field) << plan.error().what();
  EXPECT_NE(plan.error().what().find(field), std::string::npos) << plan.error().what();
}

TEST(ExecutionPlanJson, WritesEveryFieldAsTheSchemaDocumentsIt) {
  const json expected = json::parse(R"({
    "schema_version": 2,
    "device": {"backend": "cuda", "device": "cuda:1"},
    "residency": {"kind": "fully_resident"},
    "drafting": {"kind": "external", "model": "draft.gguf"},
    "session": {"context_length": 2048, "kv_cache_type": "f32", "threads": 3},
    "memory_budget_bytes": 8589934592,
    "max_cached_shards": 7,
    "required_device_capabilities": ["exact_completion", "collectives"],
    "required_session_capabilities": ["persistent_cache", "activation_inspection"]
  })");
  EXPECT_EQ(execution_plan_to_json(full_plan()), expected);
}

TEST(ExecutionPlanJson, RoundTripGivesTheSamePlan) {
  const std::string text = execution_plan_to_json_string(full_plan());
  const Result<ExecutionPlan> back = parse_execution_plan(text);
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_TRUE(*back == full_plan());
  EXPECT_EQ(execution_plan_to_json_string(*back), text);
}

TEST(ExecutionPlanJson, OmittedOptionalFieldsTakeTheFailClosedDefaults) {
  const Result<ExecutionPlan> plan = execution_plan_from_json(minimal());
  ASSERT_TRUE(plan.has_value()) << plan.error().what();
  EXPECT_EQ(plan->residency(), ResidencyPlan::fully_resident());
  EXPECT_EQ(plan->drafting().kind(), DraftingPlan::Kind::kDisabled);
  EXPECT_EQ(plan->max_cached_shards(), 4u);
  EXPECT_EQ(plan->required_device_capabilities(), DeviceCapabilities{});
  EXPECT_EQ(plan->required_session_capabilities(), SessionCapabilities{});
}

TEST(ExecutionPlanJson, RejectsAnotherSchemaVersion) {
  json doc = minimal();
  doc["schema_version"] = 3;
  expect_field_error(doc, ErrorCode::kUnsupported, "schema_version");
}

TEST(ExecutionPlanJson, ASchemaOnePlanReadsWithTheLoaderChosenSessionAndIsWrittenAsSchemaTwo) {
  const Result<ExecutionPlan> plan = execution_plan_from_json(minimal());
  ASSERT_TRUE(plan.has_value()) << plan.error().what();
  EXPECT_EQ(plan->session(), SessionPlan{});
  const json written = execution_plan_to_json(*plan);
  EXPECT_EQ(written.at("schema_version"), 2);
  EXPECT_EQ(written.at("session").at("context_length"), 0);
  EXPECT_TRUE(written.at("memory_budget_bytes").is_null());
}

TEST(ExecutionPlanJson, ASchemaOnePlanMayNotCarrySchemaTwoFields) {
  json doc = minimal();
  doc["session"] = json{{"context_length", 512}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "session");
}

TEST(ExecutionPlanJson, ReadsTheSessionAndNgramDraftingOfSchemaTwo) {
  json doc = minimal();
  doc["schema_version"] = 2;
  doc["session"] = json{{"context_length", 1024}, {"kv_cache_type", "f32"}, {"threads", 2}};
  doc["drafting"] = json{{"kind", "ngram"}, {"ngram", 4}};
  doc["memory_budget_bytes"] = 1000;
  const Result<ExecutionPlan> plan = execution_plan_from_json(doc);
  ASSERT_TRUE(plan.has_value()) << plan.error().what();
  EXPECT_EQ(plan->session().context_length, 1024u);
  EXPECT_EQ(plan->session().kv_cache_type, KvCacheType::kF32);
  EXPECT_EQ(plan->session().threads, 2u);
  EXPECT_EQ(plan->drafting().ngram_size(), 4u);
  EXPECT_EQ(plan->memory_budget_bytes(), 1000u);
}

TEST(ExecutionPlanJson, RejectsABadSessionNamingTheField) {
  json doc = minimal();
  doc["schema_version"] = 2;
  doc["session"] = json{{"kv_cache_type", "q4"}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "session.kv_cache_type");
  doc["session"] = json{{"context_length", -1}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "session.context_length");
  doc["session"] = json{{"threads", 5000}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "session.threads");
  doc["session"] = json{{"batch", 5}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "session.batch");
  doc.erase("session");
  doc["memory_budget_bytes"] = -5;
  expect_field_error(doc, ErrorCode::kInvalidArgument, "memory_budget_bytes");
  doc.erase("memory_budget_bytes");
  doc["drafting"] = json{{"kind", "ngram"}, {"ngram", 0}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "drafting.ngram");
}

TEST(ExecutionPlanJson, RejectsAMissingSchemaVersion) {
  json doc = minimal();
  doc.erase("schema_version");
  expect_field_error(doc, ErrorCode::kInvalidArgument, "schema_version");
}

TEST(ExecutionPlanJson, RejectsASchemaVersionThatIsNotAnInteger) {
  json doc = minimal();
  doc["schema_version"] = "1";
  expect_field_error(doc, ErrorCode::kInvalidArgument, "schema_version");
}

TEST(ExecutionPlanJson, RejectsAMissingDevice) {
  json doc = minimal();
  doc.erase("device");
  expect_field_error(doc, ErrorCode::kInvalidArgument, "device");
}

TEST(ExecutionPlanJson, RejectsAnEmptyBackendId) {
  json doc = minimal();
  doc["device"]["backend"] = "";
  expect_field_error(doc, ErrorCode::kInvalidArgument, "device.backend");
}

TEST(ExecutionPlanJson, RejectsAnEmptyDeviceId) {
  json doc = minimal();
  doc["device"]["device"] = "";
  expect_field_error(doc, ErrorCode::kInvalidArgument, "device.device");
}

TEST(ExecutionPlanJson, RejectsZeroShards) {
  json doc = minimal();
  doc["max_cached_shards"] = 0;
  expect_field_error(doc, ErrorCode::kInvalidArgument, "max_cached_shards");
}

TEST(ExecutionPlanJson, RejectsNegativeShards) {
  json doc = minimal();
  doc["max_cached_shards"] = -3;
  expect_field_error(doc, ErrorCode::kInvalidArgument, "max_cached_shards");
}

TEST(ExecutionPlanJson, RejectsAnUnknownDraftingMode) {
  json doc = minimal();
  doc["drafting"] = {{"kind", "telepathic"}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "drafting.kind");
}

TEST(ExecutionPlanJson, RejectsExternalDraftingWithoutAModel) {
  json doc = minimal();
  doc["drafting"] = {{"kind", "external"}, {"model", ""}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "drafting.model");
}

TEST(ExecutionPlanJson, RejectsAnUnknownCapabilityNameByItsIndex) {
  json doc = minimal();
  doc["required_device_capabilities"] = {"exact_completion", "teleportation"};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "required_device_capabilities[1]");
}

TEST(ExecutionPlanJson, RejectsASessionCapabilityListThatIsNotAnArray) {
  json doc = minimal();
  doc["required_session_capabilities"] = "persistent_cache";
  expect_field_error(doc, ErrorCode::kInvalidArgument, "required_session_capabilities");
}

TEST(ExecutionPlanJson, RejectsADeviceCapabilityNamedInTheSessionList) {
  json doc = minimal();
  doc["required_session_capabilities"] = {"transfers"};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "required_session_capabilities[0]");
}

TEST(ExecutionPlanJson, RejectsResidenciesOtherThanFullyResidentAsUnsupported) {
  json doc = minimal();
  doc["residency"] = {{"kind", "layerwise_host"}};
  expect_field_error(doc, ErrorCode::kUnsupported, "residency.kind");
  doc["residency"] = {{"kind", "nowhere"}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "residency.kind");
}

TEST(ExecutionPlanJson, RejectsUnknownFieldsInsteadOfIgnoringThem) {
  json doc = minimal();
  doc["topology"] = {{"tensor", 2}};
  expect_field_error(doc, ErrorCode::kInvalidArgument, "topology");
  json device = minimal();
  device["device"]["memory"] = 1;
  expect_field_error(device, ErrorCode::kInvalidArgument, "device.memory");
}

TEST(ExecutionPlanJson, RejectsMalformedJsonWithItsByteOffset) {
  const Result<ExecutionPlan> plan = parse_execution_plan(R"({"schema_version": 1,, })");
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(plan.error().offset().has_value());
  EXPECT_EQ(*plan.error().offset(), 22u);
}

TEST(ExecutionPlanJson, RejectsADocumentThatIsNotAnObject) {
  const Result<ExecutionPlan> plan = parse_execution_plan("[1, 2]");
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code(), ErrorCode::kInvalidArgument);
}

TEST(ExecutionPlanJson, ReadsAPlanFileAndNamesTheFileInErrors) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("eredu-plan-json-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path good = dir / "plan.json";
  std::ofstream(good) << execution_plan_to_json_string(full_plan());
  const Result<ExecutionPlan> read = read_execution_plan_file(good);
  ASSERT_TRUE(read.has_value()) << read.error().what();
  EXPECT_TRUE(*read == full_plan());

  const std::filesystem::path bad = dir / "bad.json";
  std::ofstream(bad) << R"({"schema_version": 9, "device": {"backend": "cpu", "device": "0"}})";
  const Result<ExecutionPlan> rejected = read_execution_plan_file(bad);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().path(), bad.string());
  EXPECT_EQ(rejected.error().subject(), "schema_version");

  const Result<ExecutionPlan> missing = read_execution_plan_file(dir / "absent.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kIo);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::plan
