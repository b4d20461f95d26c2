// SafeTensors model directories and their index (see
// include/eredu/checkpoint/safetensors_model.hpp).

#include "eredu/checkpoint/safetensors_model.hpp"

#include <fstream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <unordered_set>

#include "safetensors_detail.hpp"

namespace eredu::checkpoint {
namespace fs = std::filesystem;
namespace {

Error model_error(ErrorCode code, std::string message, const fs::path& path,
                  std::string subject = {}) {
  // with_subject keeps an existing (here: empty) subject, so an empty one is a no-op.
  return Error(code, std::move(message)).with_path(path.string()).with_subject(std::move(subject));
}

// A shard file name as the index gives it must be a plain relative path inside the directory.
Result<void> check_shard_name(const std::string& file, const std::string& tensor,
                              std::string_view index_path) {
  auto reject = [&](const std::string& why) {
    return fail(Error(ErrorCode::kInvalidModel, "shard path '" + file + "' " + why)
                    .with_path(std::string(index_path))
                    .with_subject(tensor));
  };
  if (file.empty()) return reject("is empty");
  if (file.find('\0') != std::string::npos) return reject("contains a NUL byte");
  const fs::path relative(file);
  if (relative.has_root_path()) return reject("is absolute; shard paths must be relative");
  for (const fs::path& part : relative) {
    if (part == "..") return reject("contains '..'; shards must stay inside the model directory");
  }
  return ok();
}

// Whether canonical `path` lies inside canonical `root`.
bool is_within(const fs::path& root, const fs::path& path) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *r != *p) return false;
  }
  return p != path.end();  // strictly below the root
}

// Reads a small text file whose size is checked against `limit` first.
Result<std::string> read_text_file(const fs::path& path, std::uint64_t limit) {
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) return fail(model_error(ErrorCode::kIo, "cannot stat: " + ec.message(), path));
  if (size > limit) {
    return fail(model_error(ErrorCode::kLimitExceeded,
                            "the index is " + std::to_string(size) + " bytes, above the limit of " +
                                std::to_string(limit),
                            path));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(size)) ||
      static_cast<std::uint64_t>(in.gcount()) != size) {
    return fail(model_error(ErrorCode::kIo, "cannot read the file", path));
  }
  return text;
}

// Roots a shard may resolve into: the directory, and for a Hugging Face cache snapshot
// (<repo>/snapshots/<revision>) the repository's blobs folder.
std::vector<fs::path> allowed_roots(const fs::path& canonical_dir, bool allow_hf_cache_blobs) {
  std::vector<fs::path> roots{canonical_dir};
  if (allow_hf_cache_blobs && canonical_dir.parent_path().filename() == "snapshots") {
    std::error_code ec;
    const fs::path blobs = fs::canonical(canonical_dir.parent_path().parent_path() / "blobs", ec);
    if (!ec) roots.push_back(blobs);
  }
  return roots;
}

Result<SafetensorsShard> load_shard(const fs::path& directory, const std::vector<fs::path>& roots,
                                    const std::string& file_name, const std::string& some_tensor,
                                    const SafetensorsModelOptions& options) {
  SafetensorsShard shard;
  shard.file_name = file_name;
  shard.path = directory / file_name;
  std::error_code ec;
  const fs::file_status status = fs::status(shard.path, ec);
  if (ec || !fs::exists(status)) {
    std::string message = "shard file does not exist";
    if (!some_tensor.empty()) message += " (the index places tensor '" + some_tensor + "' in it)";
    return fail(model_error(ErrorCode::kNotFound, std::move(message), shard.path, file_name));
  }
  shard.resolved_path = fs::canonical(shard.path, ec);
  if (ec) {
    return fail(model_error(ErrorCode::kIo, "cannot resolve the shard path: " + ec.message(),
                            shard.path, file_name));
  }
  bool confined = false;
  for (const fs::path& root : roots)
    confined = confined || is_within(root, shard.resolved_path);
  if (!confined) {
    return fail(model_error(
        ErrorCode::kInvalidModel,
        "shard resolves to '" + shard.resolved_path.string() + "', outside the model directory",
        shard.path, file_name));
  }
  if (!fs::is_regular_file(status)) {
    return fail(model_error(ErrorCode::kInvalidModel, "shard is not a regular file", shard.path,
                            file_name));
  }
  auto header = read_safetensors_header(shard.resolved_path, options.limits);
  if (!header) {
    Error error = std::move(header).error();
    // Report the path as the index names it, keeping the reader's message and offset.
    std::string message = error.message();
    if (!error.path().empty()) message += " (resolved to " + error.path() + ")";
    Error renamed = Error(error.code(), std::move(message))
                        .with_path(shard.path.string())
                        .with_subject(error.subject());
    if (error.offset()) renamed = Error(std::move(renamed).with_offset(*error.offset()));
    return fail(std::move(renamed));
  }
  shard.header = std::move(*header);
  return shard;
}

}  // namespace

Result<SafetensorsIndex> parse_safetensors_index(std::span<const std::byte> json,
                                                 std::string_view path,
                                                 const SafetensorsModelOptions& options) {
  const std::string_view text(reinterpret_cast<const char*>(json.data()), json.size());
  auto error = [&](ErrorCode code, std::string message, std::string subject = {}) {
    return fail(model_error(code, std::move(message), fs::path(path), std::move(subject)));
  };
  try {
    const detail::JsonScan scan = detail::scan_json_structure(text, options.limits.max_json_depth);
    if (scan.outcome == detail::JsonScan::Outcome::kTooDeep) {
      return fail(Error(ErrorCode::kLimitExceeded,
                        "the index JSON nests deeper than " +
                            std::to_string(options.limits.max_json_depth) + " levels")
                      .with_path(std::string(path))
                      .with_offset(scan.position));
    }
    // nlohmann's DOM keeps the last of duplicate keys; the callback sees every key first.
    std::vector<std::unordered_set<std::string>> open_objects;
    std::optional<std::string> duplicate;
    const nlohmann::json::parser_callback_t on_event = [&](int, nlohmann::json::parse_event_t event,
                                                           nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if (event == Event::object_start) open_objects.emplace_back();
      if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
      if (event == Event::key && !open_objects.empty() && !duplicate) {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!open_objects.back().insert(key).second) duplicate = key;
      }
      return true;
    };
    nlohmann::json index;
    try {
      index = nlohmann::json::parse(text.begin(), text.end(), on_event);
    } catch (const nlohmann::json::parse_error& e) {
      return fail(
          Error(ErrorCode::kInvalidModel, std::string("index JSON is malformed: ") + e.what())
              .with_path(std::string(path))
              .with_offset(e.byte == 0 ? 0 : e.byte - 1));
    }
    if (duplicate)
      return error(ErrorCode::kDuplicate, "key appears twice in the index", *duplicate);
    if (!index.is_object())
      return error(ErrorCode::kInvalidModel, "the index must be a JSON object");

    SafetensorsIndex result;
    if (const auto meta = index.find("metadata"); meta != index.end()) {
      if (!meta->is_object()) {
        return error(ErrorCode::kInvalidModel, "\"metadata\" must be an object", "metadata");
      }
      if (const auto size = meta->find("total_size");
          size != meta->end() && size->is_number_unsigned()) {
        result.total_size = size->get<std::uint64_t>();
      }
    }
    const auto map = index.find("weight_map");
    if (map == index.end()) {
      return error(ErrorCode::kInvalidModel, "the index has no \"weight_map\"", "weight_map");
    }
    if (!map->is_object() || map->empty()) {
      return error(ErrorCode::kInvalidModel, "\"weight_map\" must be a non-empty object",
                   "weight_map");
    }
    std::set<std::string> files;
    result.weight_map.reserve(map->size());
    for (const auto& [name, file] : map->items()) {
      if (name.empty()) return error(ErrorCode::kInvalidModel, "a tensor has an empty name");
      if (!file.is_string()) {
        return error(ErrorCode::kInvalidModel,
                     "the weight_map value must be a shard file name (a string)", name);
      }
      const auto& file_name = file.get_ref<const std::string&>();
      EREDU_TRY_VOID(check_shard_name(file_name, name, path));
      files.insert(file_name);
      result.weight_map.emplace_back(name, file_name);
    }
    result.shard_files.assign(files.begin(), files.end());
    return result;
  } catch (const std::bad_alloc&) {
    return error(ErrorCode::kLimitExceeded, "out of memory while parsing the index");
  } catch (const std::exception& e) {
    return error(ErrorCode::kInvalidModel, std::string("index parsing failed: ") + e.what());
  }
}

Result<SafetensorsModelFiles> SafetensorsModelFiles::open(const fs::path& path,
                                                          const SafetensorsModelOptions& options) {
  try {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return fail(model_error(ErrorCode::kNotFound, "no such file or directory", path));
    }
    SafetensorsModelFiles model;
    fs::path index_path;
    std::string single_file;
    bool named_file = false;  // a .safetensors file path given directly (not via a directory)
    if (fs::is_directory(status)) {
      model.directory_ = path;
      if (fs::exists(path / kSafetensorsIndexFileName, ec)) {
        index_path = path / kSafetensorsIndexFileName;
      } else if (fs::exists(path / kSafetensorsSingleFileName, ec)) {
        single_file = std::string(kSafetensorsSingleFileName);
      } else {
        return fail(model_error(ErrorCode::kNotFound,
                                "the directory holds neither " +
                                    std::string(kSafetensorsIndexFileName) + " nor " +
                                    std::string(kSafetensorsSingleFileName),
                                path));
      }
    } else {
      model.directory_ = path.parent_path().empty() ? fs::path(".") : path.parent_path();
      const std::string name = path.filename().string();
      if (name.size() > 11 && name.ends_with(".index.json")) {
        index_path = path;
      } else {
        single_file = name;
        named_file = true;
      }
    }

    const fs::path canonical_dir = fs::canonical(model.directory_, ec);
    if (ec) {
      return fail(model_error(ErrorCode::kIo, "cannot resolve the directory: " + ec.message(),
                              model.directory_));
    }
    std::vector<fs::path> roots = allowed_roots(canonical_dir, options.allow_hf_cache_blobs);
    if (named_file) {
      // The caller chose this file explicitly: wherever a symlink to it leads is where it is.
      const fs::path resolved = fs::canonical(path, ec);
      if (!ec) roots.push_back(resolved.parent_path());
    }

    if (!single_file.empty()) {
      EREDU_TRY(SafetensorsShard shard,
                load_shard(model.directory_, roots, single_file, {}, options));
      model.shards_.push_back(std::move(shard));
    } else {
      EREDU_TRY(const std::string text, read_text_file(index_path, options.max_index_bytes));
      EREDU_TRY(SafetensorsIndex index,
                parse_safetensors_index(std::as_bytes(std::span(text.data(), text.size())),
                                        index_path.string(), options));
      // One tensor per shard file, to name in a "missing shard" error.
      std::map<std::string, std::string> example;
      for (const auto& [name, file] : index.weight_map)
        example.try_emplace(file, name);
      for (const std::string& file : index.shard_files) {
        EREDU_TRY(SafetensorsShard shard,
                  load_shard(model.directory_, roots, file, example[file], options));
        model.shards_.push_back(std::move(shard));
      }
      model.index_ = std::move(index);
    }

    // Merge, rejecting a tensor held by two shards.
    for (std::size_t s = 0; s < model.shards_.size(); ++s) {
      for (const SafetensorsTensor& tensor : model.shards_[s].header.tensors()) {
        const auto [it, inserted] = model.by_name_.emplace(tensor.name, model.tensors_.size());
        if (!inserted) {
          const SafetensorsShard& first = model.shards_[model.tensors_[it->second].shard];
          return fail(model_error(
              ErrorCode::kDuplicate,
              "tensor is in two shards: " + first.file_name + " and " + model.shards_[s].file_name,
              model.shards_[s].path, tensor.name));
        }
        model.tensors_.push_back(SafetensorsModelTensor{tensor, s});
      }
    }

    if (model.index_) {
      std::map<std::string, std::size_t> shard_of_file;
      for (std::size_t s = 0; s < model.shards_.size(); ++s) {
        shard_of_file.emplace(model.shards_[s].file_name, s);
      }
      std::unordered_map<std::string_view, std::string_view> listed;
      for (const auto& [name, file] : model.index_->weight_map) {
        listed.emplace(name, file);
        const SafetensorsModelTensor* found = model.find(name);
        const SafetensorsShard& named = model.shards_[shard_of_file.at(file)];
        if (found == nullptr) {
          return fail(
              model_error(ErrorCode::kInvalidModel,
                          "the index places this tensor in " + file + ", which does not contain it",
                          named.path, name));
        }
        if (found->shard != shard_of_file.at(file)) {
          const SafetensorsShard& actual = model.shards_[found->shard];
          return fail(model_error(
              ErrorCode::kInvalidModel,
              "the index places this tensor in " + file + " but it is in " + actual.file_name,
              actual.path, name));
        }
      }
      for (const SafetensorsModelTensor& entry : model.tensors_) {
        if (listed.count(entry.tensor.name) == 0) {
          const SafetensorsShard& shard = model.shards_[entry.shard];
          return fail(model_error(
              ErrorCode::kInvalidModel,
              "shard " + shard.file_name + " holds this tensor but the index does not list it",
              shard.path, entry.tensor.name));
        }
      }
    }
    return model;
  } catch (const std::bad_alloc&) {
    return fail(
        model_error(ErrorCode::kLimitExceeded, "out of memory while opening the model", path));
  } catch (const std::exception& e) {
    return fail(
        model_error(ErrorCode::kIo, std::string("cannot open the model: ") + e.what(), path));
  }
}

const SafetensorsModelTensor* SafetensorsModelFiles::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::uint64_t SafetensorsModelFiles::total_tensor_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const SafetensorsModelTensor& entry : tensors_)
    total += entry.tensor.byte_size;
  return total;
}

Result<SafetensorsFile> SafetensorsModelFiles::open_shard(std::size_t shard,
                                                          SafetensorsOpenMode mode) const {
  if (shard >= shards_.size()) {
    return fail(ErrorCode::kInvalidArgument, "shard index " + std::to_string(shard) +
                                                 " is out of range (" +
                                                 std::to_string(shards_.size()) + " shards)");
  }
  const SafetensorsShard& entry = shards_[shard];
  std::shared_ptr<const MappedFile> file;
  if (mode == SafetensorsOpenMode::kMap) {
    EREDU_TRY(auto mapped, MappedFile::open(entry.resolved_path));
    file = std::move(mapped);
  } else {
    EREDU_TRY(auto loaded, detail::read_file_into_memory(entry.resolved_path));
    file = std::move(loaded);
  }
  return SafetensorsFile::attach(entry.header, std::move(file));
}

}  // namespace eredu::checkpoint
