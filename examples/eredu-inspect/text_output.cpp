// The text rendering of a Report: sections "container", "metadata", "tensors",
// "totals per encoding" and "verdict", each a small aligned table.

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "output.hpp"

namespace eredu::inspect {
namespace {

// Columns are as wide as their widest cell, up to a cap, so that one absurdly long key or tensor
// name does not push every other row off the screen (it just overflows its own row).
constexpr std::size_t kMaxColumnWidth = 48;

using Row = std::vector<std::string>;

// Display width of a UTF-8 cell: one column per code point (good enough for names and keys).
std::size_t display_width(const std::string& cell) {
  return static_cast<std::size_t>(std::count_if(cell.begin(), cell.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u;
  }));
}

// Appends `rows` as a table indented by two spaces; columns in `right` are right-aligned. The last
// column is never padded.
void append_table(std::string& out, const std::vector<Row>& rows,
                  const std::vector<bool>& right = {}) {
  std::vector<std::size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], std::min(display_width(row[c]), kMaxColumnWidth));
    }
  }
  for (const Row& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const std::size_t width = display_width(row[c]);
      const std::size_t pad = width < widths[c] ? widths[c] - width : 0;
      line += ' ';
      const bool align_right = c < right.size() && right[c];
      if (align_right) line.append(pad, ' ');
      line += row[c];
      if (!align_right && !last) line.append(pad, ' ');
      if (!last) line += ' ';
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line;
    out += '\n';
  }
}

std::string number_and_bytes(std::uint64_t bytes) {
  return fmt::format("{} ({})", bytes, human_bytes(bytes));
}

void append_container(std::string& out, const Report& report) {
  const ContainerSummary& c = report.container;
  out += "container\n";
  std::vector<Row> rows{{"path", escape_for_terminal(c.path)}};
  const ShardSummary* first = c.shards.empty() ? nullptr : &c.shards.front();
  if (c.format == Format::kGguf) {
    rows.push_back({"format", fmt::format("GGUF v{}", c.gguf_version)});
    rows.push_back({"alignment", std::to_string(c.alignment)});
    if (first) rows.push_back({"data offset", std::to_string(first->data_offset)});
  } else {
    rows.push_back({"format", "SafeTensors"});
    if (first) {
      rows.push_back({"header size", number_and_bytes(first->header_bytes)});
      rows.push_back({"data offset", std::to_string(first->data_offset)});
    }
    if (c.index_file) rows.push_back({"index", escape_for_terminal(*c.index_file)});
    if (c.index_total_size) {
      rows.push_back({"index total_size", number_and_bytes(*c.index_total_size)});
    }
  }
  if (first) rows.push_back({"file size", number_and_bytes(first->file_size)});
  rows.push_back({"shards", std::to_string(c.shards.size())});
  append_table(out, rows);
  if (c.shards.size() > 1) {
    std::vector<Row> shard_rows{{"#", "file", "size", "data offset", "tensors"}};
    for (std::size_t i = 0; i < c.shards.size(); ++i) {
      const ShardSummary& s = c.shards[i];
      shard_rows.push_back({std::to_string(i), escape_for_terminal(s.path),
                            std::to_string(s.file_size), std::to_string(s.data_offset),
                            std::to_string(s.tensor_count)});
    }
    append_table(out, shard_rows, {true, false, true, true, true});
  }
}

void append_metadata(std::string& out, const Report& report, const OutputOptions& options) {
  out += fmt::format("\nmetadata ({} entr{})\n", report.metadata.size(),
                     report.metadata.size() == 1 ? "y" : "ies");
  if (report.metadata.empty()) {
    out += "  (none)\n";
    return;
  }
  std::vector<Row> rows;
  rows.reserve(report.metadata.size());
  for (const MetadataItem& item : report.metadata) {
    rows.push_back({escape_for_terminal(item.key), value_type_name(item.value),
                    summarize_value(item.value, options.limits)});
  }
  append_table(out, rows);
}

void append_tensors(std::string& out, const Report& report) {
  out += fmt::format("\ntensors ({})\n", report.tensors.size());
  if (report.tensors.empty()) {
    out += "  (none)\n";
    return;
  }
  std::vector<Row> rows{{"name", "encoding", "shape", "bytes", "offset", "shard"}};
  rows.reserve(report.tensors.size() + 1);
  for (const TensorRow& t : report.tensors) {
    rows.push_back({escape_for_terminal(t.name), t.encoding, shape_string(t.shape),
                    std::to_string(t.bytes), std::to_string(t.offset), std::to_string(t.shard)});
  }
  append_table(out, rows, {false, false, false, true, true, true});
}

void append_totals(std::string& out, const Report& report) {
  out += "\ntotals per encoding\n";
  if (report.totals.empty()) {
    out += "  (no tensors)\n";
    return;
  }
  std::vector<Row> rows{{"encoding", "tensors", "bytes", "", "share"}};
  for (const EncodingTotal& t : report.totals) {
    rows.push_back({t.encoding, std::to_string(t.tensors), std::to_string(t.bytes),
                    human_bytes(t.bytes), percent(t.share)});
  }
  rows.push_back({"total", std::to_string(report.verdict.tensor_count),
                  std::to_string(report.verdict.tensor_bytes),
                  human_bytes(report.verdict.tensor_bytes),
                  percent(report.totals.empty() ? 0 : 1)});
  append_table(out, rows, {false, true, true, true, true});
}

void append_verdict(std::string& out, const Report& report) {
  out += "\nverdict\n";
  out += "  " + report.verdict.summary + "\n";
  for (const std::string& warning : report.verdict.warnings) {
    out += "  warning: " + escape_for_terminal(warning) + "\n";
  }
}

}  // namespace

std::string render_text(const Report& report, const OutputOptions& options) {
  std::string out;
  append_container(out, report);
  append_metadata(out, report, options);
  if (options.tensors) append_tensors(out, report);
  append_totals(out, report);
  append_verdict(out, report);
  return out;
}

}  // namespace eredu::inspect
