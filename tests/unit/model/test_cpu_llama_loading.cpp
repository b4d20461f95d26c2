// Loading the llama family on the CPU backend: admission and preflight read no payload, each
// owner is leased once, weights read the mapping in place, tied weights share storage, a unit binds
// all-or-nothing, and session faults leave the session usable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/huge_pages.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/counting_source.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/lease.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/runtime/load_model.hpp"
#include "op_parity.hpp"
#include "page_residency.hpp"
#include "tiny_llama.hpp"

namespace {

using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::cpu::CpuLoadOptions;
using eredu::testing::TinyLlama;

class CpuLlamaLoading : public ::testing::Test {
 protected:
  // Every file a test wrote (some write more than one) is removed after it.
  void TearDown() override {
    for (const auto& path : paths_) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  }
  std::filesystem::path write(const TinyLlama& t, const std::string& name) {
    return keep(t.write(name));
  }
  // A file name in the temporary directory for a test that writes its own file.
  std::filesystem::path scratch_path(const std::string& name) {
    return keep(std::filesystem::temp_directory_path() /
                ("eredu_" + name + "_" + std::to_string(::getpid()) + ".gguf"));
  }
  // `path`, to be removed after the test.
  std::filesystem::path keep(std::filesystem::path path) { return paths_.emplace_back(path); }
  std::vector<std::filesystem::path> paths_;
};

TEST_F(CpuLlamaLoading, InspectionAdmissionAndPreflightReadNoPayload) {
  const auto path = write(TinyLlama{}, "counting.gguf");
  auto inspection = eredu::runtime::inspect_artifact(path);
  ASSERT_TRUE(inspection.has_value()) << inspection.error().what();
  auto counting = std::make_shared<eredu::checkpoint::CountingCheckpointSource>(inspection->source);
  inspection->source = counting;
  const CpuBackend backend(CpuBackendOptions{1});
  auto config = eredu::runtime::plan_inspected_model(backend, *inspection, CpuLoadOptions{});
  ASSERT_TRUE(config.has_value()) << config.error().what();
  for (const auto& p : config->selected.admission.schema) {
    if (p.alias_of) continue;
    ASSERT_TRUE(CpuBackend::preflight_recipe(p.recipe, *counting).has_value());
  }
  EXPECT_EQ(counting->counts().lease_requests, 0u);
  EXPECT_EQ(counting->counts().payload_reads, 0u);
  EXPECT_EQ(counting->counts().payload_bytes, 0u);

  auto runtime = eredu::runtime::ModelRuntime<CpuBackend>::prepare(backend, std::move(*config));
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  EXPECT_EQ(counting->counts().leases_granted, 3u + 9u * 2u);  // each owner exactly once
}

TEST_F(CpuLlamaLoading, TiedOutputSharesTheTokenEmbeddingStorageWithoutASecondLease) {
  TinyLlama t;
  t.tied_output = true;
  const auto path = write(t, "tied.gguf");
  auto inspection = eredu::runtime::inspect_artifact(path);
  ASSERT_TRUE(inspection.has_value());
  auto counting = std::make_shared<eredu::checkpoint::CountingCheckpointSource>(inspection->source);
  inspection->source = counting;
  const CpuBackend backend(CpuBackendOptions{1});
  auto config = eredu::runtime::plan_inspected_model(backend, *inspection, CpuLoadOptions{});
  ASSERT_TRUE(config.has_value()) << config.error().what();
  auto prepared = backend.prepare_model(std::move(*config));
  ASSERT_TRUE(prepared.has_value()) << prepared.error().what();
  const auto& llama =
      std::get<eredu::model::decoder::DecoderModel<CpuBackend>>(*prepared->model().model);
  const auto* output = llama.find_parameter("output.weight");
  const auto* embd = llama.find_parameter("token_embd.weight");
  ASSERT_NE(output, nullptr);
  ASSERT_NE(embd, nullptr);
  ASSERT_TRUE(output->bound());
  EXPECT_EQ(output->data(), embd->data());  // the tied output reads the embedding's bytes
  EXPECT_EQ(counting->counts().leases_granted, 2u + 9u * 2u);
}

// The packed bytes are not copied: the weight reads the checkpoint's mapping in place, and keeps
// it valid after the lease, the source and its shard cache are gone.
TEST_F(CpuLlamaLoading, WeightsReadTheCheckpointMappingInPlaceAndOutliveTheSource) {
  const auto path = write(TinyLlama{}, "in_place.gguf");
  auto inspection = eredu::runtime::inspect_artifact(path);
  ASSERT_TRUE(inspection.has_value()) << inspection.error().what();
  auto lease = inspection->source->acquire_lease(
      eredu::checkpoint::TensorReadRequest{"blk.0.ffn_up.weight"});
  ASSERT_TRUE(lease.has_value()) << lease.error().what();
  ASSERT_NE(lease->borrowed_mapping(), nullptr);
  const std::byte* in_file = lease->bytes().data();
  const std::vector<std::byte> expected(lease->bytes().begin(), lease->bytes().end());
  auto materialized = CpuBackend::materialize(std::move(*lease), {});
  ASSERT_TRUE(materialized.has_value()) << materialized.error().what();
  auto weight = CpuBackend::finish_materialization(std::move(*materialized));
  ASSERT_TRUE(weight.has_value());
  EXPECT_EQ(weight->data(), in_file);
  { const auto gone = std::move(*inspection); }  // the source, its shard cache and every pin
  ASSERT_EQ(weight->bytes.size(), expected.size());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), weight->bytes.begin()));
}

eredu::checkpoint::CheckpointLease f32_lease(
    std::span<const std::byte> bytes, std::shared_ptr<const eredu::checkpoint::MappedFile> mapping,
    std::vector<std::byte> owned) {
  eredu::checkpoint::CheckpointLease::Parts parts;
  parts.metadata.name = "w";
  parts.metadata.shape = {2, 8};
  parts.metadata.dtype = eredu::DType::kF32;
  parts.metadata.byte_length = 64;
  parts.output_shape = {2, 8};
  parts.bytes = bytes;
  parts.mapping = std::move(mapping);
  parts.owned = std::move(owned);
  return eredu::checkpoint::CheckpointLease(std::move(parts));
}

std::vector<std::byte> counting_bytes(std::size_t n) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<std::byte>(i * 7 + 3);
  return bytes;
}

// Bytes at an address less aligned than an allocation's are copied (into aligned storage), as
// are bytes the source gathered into a copy the lease owns: the weight never points into memory
// that goes away with the lease.
TEST_F(CpuLlamaLoading, WeightsCopyMisalignedOrGatheredLeaseBytes) {
  const std::vector<std::byte> values = counting_bytes(64);
  std::vector<std::byte> shifted(1);
  shifted.insert(shifted.end(), values.begin(), values.end());
  const auto mapping = eredu::checkpoint::MappedFile::from_bytes(shifted, "shifted");
  const std::span<const std::byte> misaligned = mapping->bytes().subspan(1);
  ASSERT_NE(reinterpret_cast<std::uintptr_t>(misaligned.data()) % alignof(std::max_align_t), 0u);

  auto from_mapping = CpuBackend::materialize(f32_lease(misaligned, mapping, {}), {});
  ASSERT_TRUE(from_mapping.has_value()) << from_mapping.error().what();
  const auto& copied = from_mapping->weight;
  EXPECT_NE(copied.data(), static_cast<const void*>(misaligned.data()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copied.data()) % alignof(std::max_align_t), 0u);
  EXPECT_TRUE(std::equal(values.begin(), values.end(), copied.bytes.begin(), copied.bytes.end()));

  auto gathered_lease = f32_lease({}, mapping, values);
  ASSERT_EQ(gathered_lease.borrowed_mapping(), nullptr);
  const std::byte* lease_owned = gathered_lease.bytes().data();
  auto from_gathered = CpuBackend::materialize(std::move(gathered_lease), {});
  ASSERT_TRUE(from_gathered.has_value()) << from_gathered.error().what();
  const auto& gathered = from_gathered->weight;
  EXPECT_NE(gathered.data(), static_cast<const void*>(lease_owned));
  EXPECT_TRUE(
      std::equal(values.begin(), values.end(), gathered.bytes.begin(), gathered.bytes.end()));
}

// A CPU backend whose validate_bind rejects the 7th parameter it is asked about.
struct FailsSeventhBind : CpuBackend {
  static inline std::atomic<int> calls{0};
  static eredu::Result<void> validate_bind(const parameter& slot, const materialized_weight& w) {
    if (++calls == 7) return eredu::fail(eredu::ErrorCode::kBackend, "injected failure");
    return CpuBackend::validate_bind(slot, w);
  }
};

TEST_F(CpuLlamaLoading, AFailedValidateBindInTheMiddleOfAUnitPublishesNothing) {
  const auto path = write(TinyLlama{}, "atomic.gguf");
  auto inspection = eredu::runtime::inspect_artifact(path);
  ASSERT_TRUE(inspection.has_value());
  const CpuBackend backend(CpuBackendOptions{1});
  auto config = eredu::runtime::plan_inspected_model(backend, *inspection, CpuLoadOptions{});
  ASSERT_TRUE(config.has_value());
  const auto& selected = config->selected;
  auto llama = eredu::model::declare_model<CpuBackend>(selected.admission);
  ASSERT_TRUE(llama.has_value());
  std::vector<eredu::runtime::WeightBinding> bindings;
  for (const auto& p : selected.admission.schema)
    bindings.push_back({p.id, p.recipe, p.alias_of});
  auto unit = eredu::runtime::materialize_bindings<FailsSeventhBind>(*config->source, bindings, {});
  ASSERT_TRUE(unit.has_value()) << unit.error().what();
  FailsSeventhBind::calls = 0;
  auto bound = eredu::runtime::bind_materialized_unit<FailsSeventhBind>(std::get<0>(*llama),
                                                                        std::move(*unit));
  ASSERT_FALSE(bound.has_value());
  EXPECT_NE(bound.error().what().find("injected failure"), std::string::npos);
  EXPECT_EQ(FailsSeventhBind::calls.load(), 7);
  int published = 0;
  std::get<0>(*llama).visit_parameters([&](std::string_view, CpuBackend::parameter& p) {
    if (p.bound()) ++published;
  });
  EXPECT_EQ(published, 0);
}

// A CPU backend that records, per weight, whether it was materialized as read by rows only.
struct RecordsRowsOnly : CpuBackend {
  static inline std::map<std::string, bool> rows_only;
  static eredu::Result<materialization> materialize_recipe(
      const eredu::checkpoint::DerivedWeightRecipe& recipe,
      const eredu::checkpoint::CheckpointSource& source, const materialization_context& context) {
    auto result = CpuBackend::materialize_recipe(recipe, source, context);
    if (result) rows_only[result->weight.name] = context.rows_only;
    return result;
  }
};

// The decoder's schema marks token_embd as a table read by rows (TensorClass::kTable) unless the
// output matrix is tied to it, and the load hands the backend that in its materialization
// context, so the CPU backend makes no row groups for an embedding table no product reads.
TEST_F(CpuLlamaLoading, AnUntiedEmbeddingTableIsMaterializedAsReadByRowsOnly) {
  for (const bool tied : {false, true}) {
    SCOPED_TRACE(tied ? "tied output" : "untied output");
    TinyLlama t;
    t.tied_output = tied;
    const auto path = write(t, tied ? "tied_rows.gguf" : "untied_rows.gguf");
    auto inspection = eredu::runtime::inspect_artifact(path);
    ASSERT_TRUE(inspection.has_value());
    const RecordsRowsOnly backend;
    auto config = eredu::runtime::plan_inspected_model(backend, *inspection, CpuLoadOptions{});
    ASSERT_TRUE(config.has_value()) << config.error().what();
    RecordsRowsOnly::rows_only.clear();
    auto prepared = eredu::runtime::prepare_family_model(backend, "test", std::move(*config));
    ASSERT_TRUE(prepared.has_value()) << prepared.error().what();
    ASSERT_TRUE(RecordsRowsOnly::rows_only.contains("token_embd.weight"));
    EXPECT_EQ(RecordsRowsOnly::rows_only["token_embd.weight"], !tied);
    for (const auto& [name, rows_only] : RecordsRowsOnly::rows_only) {
      if (name != "token_embd.weight") {
        EXPECT_FALSE(rows_only) << name;
      }
    }
  }
}

TEST_F(CpuLlamaLoading, AMissingBindingIsAnErrorAndPublishesNothing) {
  const auto path = write(TinyLlama{}, "missing_binding.gguf");
  auto inspection = eredu::runtime::inspect_artifact(path);
  ASSERT_TRUE(inspection.has_value());
  const CpuBackend backend(CpuBackendOptions{1});
  auto config = eredu::runtime::plan_inspected_model(backend, *inspection, CpuLoadOptions{});
  ASSERT_TRUE(config.has_value());
  const auto& selected = config->selected;
  auto llama = eredu::model::declare_model<CpuBackend>(selected.admission);
  ASSERT_TRUE(llama.has_value());
  std::vector<eredu::runtime::WeightBinding> bindings;
  for (const auto& p : selected.admission.schema)
    if (p.id != "blk.1.ffn_down.weight") bindings.push_back({p.id, p.recipe, p.alias_of});
  auto unit = eredu::runtime::materialize_bindings<CpuBackend>(*config->source, bindings, {});
  ASSERT_TRUE(unit.has_value());
  auto bound =
      eredu::runtime::bind_materialized_unit<CpuBackend>(std::get<0>(*llama), std::move(*unit));
  ASSERT_FALSE(bound.has_value());
  EXPECT_EQ(bound.error().subject(), "blk.1.ffn_down.weight");
  int published = 0;
  std::get<0>(*llama).visit_parameters([&](std::string_view, CpuBackend::parameter& p) {
    if (p.bound()) ++published;
  });
  EXPECT_EQ(published, 0);
}

TEST_F(CpuLlamaLoading, RejectedInputsLeaveTheSessionUsable) {
  const auto path = write(TinyLlama{}, "faults.gguf");
  CpuLoadOptions options;
  options.context_length = 8;
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), path, options);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto empty = runtime->prefill({});
  ASSERT_FALSE(empty.has_value());
  auto out_of_range = runtime->prefill({1, 10});
  ASSERT_FALSE(out_of_range.has_value());
  EXPECT_NE(out_of_range.error().what().find("token id 10"), std::string::npos);
  auto too_long = runtime->prefill(std::vector<std::uint32_t>(9, 1));
  ASSERT_FALSE(too_long.has_value());
  EXPECT_EQ(too_long.error().code(), eredu::ErrorCode::kLimitExceeded);
  EXPECT_EQ(runtime->session().checkpoint(), 0u);
  auto fine = runtime->prefill({1, 2, 3});
  ASSERT_TRUE(fine.has_value()) << fine.error().what();
  EXPECT_EQ(runtime->session().checkpoint(), 3u);
  auto logits = runtime->observe_output(fine->output);
  ASSERT_TRUE(logits.has_value());
  EXPECT_EQ(logits->size(), 10u);
}

TEST_F(CpuLlamaLoading, TruncateRollsTheCacheBackSoTheSameStepGivesTheSameLogits) {
  const auto path = write(TinyLlama{}, "truncate.gguf");
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), path, {});
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill({1, 4, 2}).has_value());
  auto first = runtime->decode(std::uint32_t{7});
  ASSERT_TRUE(first.has_value());
  const auto first_logits = *runtime->observe_output(first->output);
  ASSERT_TRUE(runtime->decode(std::uint32_t{5}).has_value());
  ASSERT_TRUE(runtime->session_mut().truncate(3).has_value());
  auto again = runtime->decode(std::uint32_t{7});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*runtime->observe_output(again->output), first_logits);
  EXPECT_FALSE(runtime->session_mut().truncate(99).has_value());
}

TEST_F(CpuLlamaLoading, PrefillInOneCallEqualsTokenByTokenDecoding) {
  const auto path = write(TinyLlama{}, "prefill_vs_decode.gguf");
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), path, {});
  ASSERT_TRUE(runtime.has_value());
  auto whole = runtime->prefill({1, 4, 2, 9});
  ASSERT_TRUE(whole.has_value());
  const auto whole_logits = *runtime->observe_output(whole->output);
  ASSERT_TRUE(runtime->session_mut().truncate(0).has_value());
  std::vector<float> step_logits;
  for (std::uint32_t t : {1u, 4u, 2u, 9u}) {
    auto step = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(step.has_value());
    step_logits = *runtime->observe_output(step->output);
  }
  ASSERT_EQ(step_logits.size(), whole_logits.size());
  for (std::size_t i = 0; i < step_logits.size(); ++i)
    EXPECT_NEAR(step_logits[i], whole_logits[i], 1e-4f);
}

TEST_F(CpuLlamaLoading, CpuDeviceIsReportedWithOnlyExactCompletion) {
  const CpuBackend backend(CpuBackendOptions{1});
  EXPECT_EQ(backend.descriptor().name, "cpu");
  auto devices = backend.devices();
  ASSERT_TRUE(devices.has_value());
  ASSERT_EQ(devices->size(), 1u);
  const auto& d = devices->front();
  EXPECT_EQ(d.descriptor.family, "cpu");
  EXPECT_TRUE(d.capabilities.exact_completion);
  EXPECT_FALSE(d.capabilities.transfers);
  EXPECT_FALSE(d.capabilities.collectives);
  ASSERT_TRUE(d.descriptor.memory_bytes.has_value());
  EXPECT_GT(*d.descriptor.memory_bytes, 0u);
}

TEST_F(CpuLlamaLoading, NonLlamaArchitectureIsRejectedBeforeAnyPayloadRead) {
  TinyLlama t;
  t.architecture = "gpt2";
  const auto path = write(t, "gpt2.gguf");
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), path, {});
  ASSERT_FALSE(runtime.has_value());
  EXPECT_EQ(runtime.error().code(), eredu::ErrorCode::kUnsupported);
}

// Where the kernel table lays an encoding out in row groups (AVX-512: K-quants, IQ4_XS, IQ4_NL;
// AVX2: the K-quants and IQ4_XS),
// materializing such a matrix makes them (in parallel on the backend's threads), the table's
// packing of the checkpoint's bytes (which the weight still reads in place, for the last rows % 16
// and for get_row), and binding carries them into the slot: a linear through the bound slot gives
// the definition's values, from the groups and the tail rows alike.
TEST_F(CpuLlamaLoading, GroupedWeightsBindWithTheKernelTablesRowGroups) {
  const eredu::cpu::KernelTable& k = eredu::cpu::kernels();
  constexpr std::size_t kRows = 83;  // five groups of 16 and 3 rows read as stored
  constexpr std::size_t kCols = 512;
  if (k.row_group_bytes(eredu::DType::kQ4_K, kRows, kCols) == 0) {
    GTEST_SKIP() << "the " << eredu::cpu::isa_name(k.isa)
                 << " kernel table reads K-quant rows as stored (the avx2 and avx512 tables make "
                    "row groups)";
  }
  const auto path = scratch_path("row_groups");  // rewritten for each encoding
  for (const eredu::DType dtype :
       {eredu::DType::kQ2_K, eredu::DType::kQ3_K, eredu::DType::kQ4_K, eredu::DType::kQ5_K,
        eredu::DType::kQ6_K, eredu::DType::kIQ4_XS, eredu::DType::kIQ4_NL}) {
    SCOPED_TRACE(eredu::to_string(dtype));
    const std::size_t group_bytes = k.row_group_bytes(dtype, kRows, kCols);
    // The AVX2 table groups the K-quants and IQ4_XS but reads IQ4_NL as stored.
    if (group_bytes == 0 && k.isa == eredu::cpu::Isa::kAvx2 && dtype == eredu::DType::kIQ4_NL) {
      continue;
    }
    ASSERT_GT(group_bytes, 0U);
    std::mt19937 rng(5 + static_cast<unsigned>(dtype));
    const auto bytes = eredu::testing::op_parity::random_packed_matrix(rng, dtype, kRows, kCols);
    eredu::checkpoint::GgufWriter writer;
    writer.add_metadata("general.architecture", eredu::checkpoint::GgufValue(std::string("llama")));
    const std::uint64_t shape[] = {kRows, kCols};
    ASSERT_TRUE(writer.add_tensor("w.weight", dtype, shape, bytes).has_value());
    ASSERT_TRUE(writer.write_file(path).has_value());
    auto source = eredu::checkpoint::GgufCheckpointSource::open(path);
    ASSERT_TRUE(source.has_value()) << source.error().what();
    auto lease = source->acquire_lease(eredu::checkpoint::TensorReadRequest{"w.weight"});
    ASSERT_TRUE(lease.has_value()) << lease.error().what();
    eredu::cpu::ThreadPool three(3);  // the groups packed in parallel, as a load does
    auto materialized = CpuBackend::materialize(std::move(*lease), {&three});
    ASSERT_TRUE(materialized.has_value()) << materialized.error().what();
    auto weight = CpuBackend::finish_materialization(std::move(*materialized));
    ASSERT_TRUE(weight.has_value());
    auto slot = CpuBackend::declare_parameter("w.weight", {kRows, kCols});
    ASSERT_TRUE(CpuBackend::validate_bind(slot, *weight).has_value());
    CpuBackend::bind(slot, std::move(*weight));

    ASSERT_EQ(slot.row_groups.size(), group_bytes);
    {  // an embedding table no product reads: materialized without row groups
      auto table_lease = source->acquire_lease(eredu::checkpoint::TensorReadRequest{"w.weight"});
      ASSERT_TRUE(table_lease.has_value());
      auto table = CpuBackend::materialize(std::move(*table_lease), {&three, true});
      ASSERT_TRUE(table.has_value()) << table.error().what();
      EXPECT_TRUE(table->weight.row_groups.empty());
      EXPECT_EQ(table->weight.bytes.size(), bytes.size());
    }
    const auto expected_groups =
        eredu::testing::op_parity::pack_row_groups(k, dtype, bytes, kRows, kCols);
    EXPECT_EQ(std::memcmp(slot.row_groups.data(), expected_groups.data, group_bytes), 0);
    ASSERT_EQ(slot.bytes.size(), bytes.size());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), slot.bytes.begin()));

    const CpuBackend backend(CpuBackendOptions{2});
    const auto values = eredu::testing::op_parity::random_floats(rng, kCols, -2, 2);
    eredu::cpu::CpuTensor x{1, kCols, eredu::cpu::ActivationValues(values.begin(), values.end())};
    auto y = backend.linear(x, slot);
    ASSERT_TRUE(y.has_value()) << y.error().what();
    std::vector<eredu::encoding::BlockQ8_K> xq(kCols / 256);
    eredu::cpu::reference::quantize_row_q8_K(x.data.data(), xq.data(), kCols);
    std::vector<eredu::encoding::BlockQ8_0> xq32(kCols / 32);  // IQ4_NL's activation blocks
    eredu::cpu::reference::quantize_row_q8_0(x.data.data(), xq32.data(), kCols);
    const std::size_t row_bytes = bytes.size() / kRows;
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::byte* row = bytes.data() + r * row_bytes;
      const float expected =
          dtype == eredu::DType::kIQ4_NL
              ? eredu::cpu::reference::dot_iq4_nl_q8_0(row, xq32.data(), xq32.size())
              : eredu::cpu::reference::dot_q8_K(dtype, row, xq.data(), xq.size());
      EXPECT_EQ(std::memcmp(&y->data[r], &expected, sizeof(float)), 0)
          << "row " << r << ": " << y->data[r] << " vs " << expected;
    }
  }
}

// A matrix's row groups are what every token streams: where the context asks for huge pages (by
// default, the process's choice: huge_pages.hpp), before or after the packing first writes them,
// the whole huge pages inside them carry MADV_HUGEPAGE's advice; where it does not, none does.
// (When the advice came, before or after the first write, shows only in whether the pages are huge
// from the start, which depends on the kernel's free memory: not checked.)
TEST_F(CpuLlamaLoading, RowGroupsOfALargeMatrixAreAdvisedIntoHugePagesWhereTheContextAsks) {
  const eredu::cpu::KernelTable& k = eredu::cpu::kernels();
  constexpr std::size_t kRows = 2048;
  constexpr std::size_t kCols = 4096;  // 4.5 MiB of Q4_0: at least one whole 2 MiB page inside
  constexpr eredu::DType kDtype = eredu::DType::kQ4_0;
  if (k.row_group_bytes(kDtype, kRows, kCols) == 0) {
    GTEST_SKIP() << "the " << eredu::cpu::isa_name(k.isa)
                 << " kernel table reads Q4_0 rows as stored (row groups are the avx512 table's)";
  }
  const std::size_t page = eredu::cpu::huge_page_bytes();
  if (page == 0) GTEST_SKIP() << "this kernel has no transparent huge pages (no hpage_pmd_size)";
  if (!eredu::testing::vm_flags_at(&page).has_value())
    GTEST_SKIP() << "/proc/self/smaps cannot be read";
  std::mt19937 rng(11);
  const auto bytes = eredu::testing::op_parity::random_packed_matrix(rng, kDtype, kRows, kCols);
  eredu::checkpoint::GgufWriter writer;
  writer.add_metadata("general.architecture", eredu::checkpoint::GgufValue(std::string("llama")));
  const std::uint64_t shape[] = {kRows, kCols};
  ASSERT_TRUE(writer.add_tensor("w.weight", kDtype, shape, bytes).has_value());
  const auto path = scratch_path("huge_groups");
  ASSERT_TRUE(writer.write_file(path).has_value());
  auto source = eredu::checkpoint::GgufCheckpointSource::open(path);
  ASSERT_TRUE(source.has_value()) << source.error().what();
  eredu::cpu::ThreadPool two(2);
  // No advice first: an advised range keeps its advice after it is freed, and the next allocation
  // may reuse it.
  using eredu::cpu::HugePageAdvice;
  for (const HugePageAdvice advice : {HugePageAdvice::kNone, HugePageAdvice::kBeforeFirstWrite,
                                      HugePageAdvice::kAfterFirstWrite}) {
    SCOPED_TRACE(std::string(eredu::cpu::advice_name(advice)));
    const bool huge = advice != HugePageAdvice::kNone;
    auto lease = source->acquire_lease(eredu::checkpoint::TensorReadRequest{"w.weight"});
    ASSERT_TRUE(lease.has_value()) << lease.error().what();
    eredu::cpu::CpuMaterializationContext context{&two};
    context.huge_pages = advice;
    auto materialized = CpuBackend::materialize(std::move(*lease), context);
    ASSERT_TRUE(materialized.has_value()) << materialized.error().what();
    const std::span<const std::byte> groups = materialized->weight.row_groups;
    ASSERT_EQ(groups.size(), k.row_group_bytes(kDtype, kRows, kCols));
    const eredu::cpu::AddressRange inside = eredu::cpu::whole_pages_inside(
        reinterpret_cast<std::uintptr_t>(groups.data()), groups.size(), page);
    ASSERT_GE(inside.bytes(), page);
    if (eredu::testing::advised_huge(groups.data()).value_or(false) &&
        reinterpret_cast<std::uintptr_t>(groups.data()) != inside.begin) {
      ADD_FAILURE() << "the partial huge page before the row groups was advised too";
    }
    for (std::uintptr_t p = inside.begin; p < inside.end; p += page) {
      EXPECT_EQ(eredu::testing::advised_huge(reinterpret_cast<const void*>(p)), huge)
          << "huge page " << (p - inside.begin) / page << " of the row groups";
    }
  }
}

// A grouped matrix's checkpoint pages never enter the process, though the file holds vectors (norm
// weights) between the matrices: the load reads what it copies (the vectors, the rows it makes the
// row groups from) from the file with read(2), so no page of the tensors' data is mapped once the
// model is bound and running. Reading through the mapping instead mapped pages, and with them
// (Linux's fault-around) the page-cache pages in a 64 KiB window around each fault: copying a
// vector mapped back the tail of the matrix before it whenever readahead had not yet brought the
// vector's page in while that matrix was packed (a CI run once found 2 of m1's pages mapped), and
// with large folios smol135m Q8_0 kept 54 MB of its file resident beside its 141 MB of row groups.
// The check covers every whole page from the first matrix to the end of the last one, the
// vectors' pages and the pages the tensors share included, so it does not depend on that timing.
TEST_F(CpuLlamaLoading, NoPageOfTheTensorDataIsMappedAfterAGroupedModelIsLoadedAndItsVectorsRead) {
  const eredu::cpu::KernelTable& k = eredu::cpu::kernels();
  constexpr std::size_t kRows = 256;
  constexpr std::size_t kCols = 2048;  // ~0.5 MiB of Q8_0 per matrix
  constexpr eredu::DType kDtype = eredu::DType::kQ8_0;
  if (k.row_group_bytes(kDtype, kRows, kCols) == 0) {
    GTEST_SKIP() << "the " << eredu::cpu::isa_name(k.isa)
                 << " kernel table reads Q8_0 rows as stored (row groups are the avx512 table's)";
  }
  if (!eredu::testing::page_is_mapped(&kRows).has_value())
    GTEST_SKIP() << "/proc/self/pagemap cannot be read";
  eredu::checkpoint::GgufWriter writer;
  writer.add_metadata("general.architecture", eredu::checkpoint::GgufValue(std::string("llama")));
  std::mt19937 rng(77);
  constexpr int kLayers = 6;
  for (int i = 0; i < kLayers; ++i) {
    const auto matrix = eredu::testing::op_parity::random_packed_matrix(rng, kDtype, kRows, kCols);
    const std::uint64_t matrix_shape[] = {kRows, kCols};
    ASSERT_TRUE(writer.add_tensor("m" + std::to_string(i), kDtype, matrix_shape, matrix));
    const auto vector =
        eredu::testing::op_parity::random_packed_matrix(rng, eredu::DType::kF32, 1, kCols);
    const std::uint64_t vector_shape[] = {kCols};
    ASSERT_TRUE(
        writer.add_tensor("v" + std::to_string(i), eredu::DType::kF32, vector_shape, vector));
  }
  const auto path = scratch_path("folios");
  ASSERT_TRUE(writer.write_file(path).has_value());
  {  // out of the page cache, so that the load reads the file as a downloaded model's first load
     // does: through readahead, which makes the large folios
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  auto source = eredu::checkpoint::GgufCheckpointSource::open(path);
  ASSERT_TRUE(source.has_value()) << source.error().what();

  // As a load does: every weight materialized, in file order, then every one bound.
  eredu::cpu::ThreadPool two(2);
  std::vector<std::string> names;
  std::vector<eredu::cpu::CpuWeight> weights;
  for (int i = 0; i < kLayers; ++i) {
    for (const char* kind : {"m", "v"}) {
      names.push_back(kind + std::to_string(i));
      auto lease = source->acquire_lease(eredu::checkpoint::TensorReadRequest{names.back()});
      ASSERT_TRUE(lease.has_value()) << lease.error().what();
      auto materialized = CpuBackend::materialize(std::move(*lease), {&two});
      ASSERT_TRUE(materialized.has_value()) << materialized.error().what();
      auto weight = CpuBackend::finish_materialization(std::move(*materialized));
      ASSERT_TRUE(weight.has_value());
      weights.push_back(std::move(*weight));
    }
  }
  std::vector<eredu::cpu::CpuWeight> slots;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const bool matrix = names[i][0] == 'm';
    slots.push_back(
        CpuBackend::declare_parameter(names[i], matrix ? std::vector<std::uint64_t>{kRows, kCols}
                                                       : std::vector<std::uint64_t>{kCols}));
    ASSERT_TRUE(CpuBackend::validate_bind(slots.back(), weights[i]).has_value());
    CpuBackend::bind(slots.back(), std::move(weights[i]));
  }

  // Tokens read the vectors (as the norms do) and the matrices' row groups.
  float sum = 0.0F;
  for (const auto& slot : slots) {
    if (slot.shape.size() == 1) {
      for (std::size_t i = 0; i < kCols; ++i) {
        float v;
        std::memcpy(&v, slot.bytes.data() + 4 * i, 4);
        sum += v;
      }
    } else {
      ASSERT_FALSE(slot.row_groups.empty());
    }
  }
  EXPECT_TRUE(std::isfinite(sum));
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(slots.front().bytes.data());
  const auto& last = slots[slots.size() - 2];  // the last matrix (a vector, a copy, follows it)
  const std::uintptr_t end =
      reinterpret_cast<std::uintptr_t>(last.bytes.data()) + last.bytes.size();
  std::vector<std::string> mapped;
  std::size_t pages = 0;
  for (std::uintptr_t p = (begin + page - 1) / page * page; p + page <= end; p += page) {
    ++pages;
    if (!eredu::testing::page_is_mapped(reinterpret_cast<const void*>(p)).value_or(false)) continue;
    const std::uintptr_t offset = p - begin;
    std::string owner = "between tensors";
    for (const auto& slot : slots) {
      const auto b = reinterpret_cast<std::uintptr_t>(slot.bytes.data());
      if (slot.shape.size() == 2 && p < b + slot.bytes.size() && b < p + page) owner = slot.name;
    }
    mapped.push_back("+" + std::to_string(offset) + " (" + owner + ")");
  }
  EXPECT_TRUE(mapped.empty()) << mapped.size() << " of the " << pages
                              << " whole pages of tensor data are mapped, the first at "
                              << (mapped.empty() ? std::string() : mapped.front());
  EXPECT_GT(pages, std::size_t{6} * 130);
}

}  // namespace
