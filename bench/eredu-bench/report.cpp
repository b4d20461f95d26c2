#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

namespace eredu::bench {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// CSV field: quoted when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string optional_number(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : std::string();
}

// Markdown table with right-aligned numeric columns, every column padded to its widest cell.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<bool>& right_aligned,
                           const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = std::max<std::size_t>(header[c].size(), 3);
    for (const auto& row : rows)
      width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out += ' ';
      out += right_aligned[c] ? pad + cells[c] : cells[c] + pad;
      out += " |";
    }
    return out + "\n";
  };
  std::string out = line(header);
  out += "|";
  for (std::size_t c = 0; c < header.size(); ++c) {
    out += ' ';
    out += right_aligned[c] ? std::string(width[c] - 1, '-') + ":" : std::string(width[c], '-');
    out += " |";
  }
  out += "\n";
  for (const auto& row : rows)
    out += line(row);
  return out;
}

}  // namespace

// --- statistics ---

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double sample_stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double m = mean(values);
  double sum = 0.0;
  for (double v : values)
    sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

std::string TestResult::test_name() const {
  std::string name(kind == TestKind::kPrompt ? "pp" : "tg");
  name += std::to_string(kind == TestKind::kPrompt ? n_prompt : n_gen);
  if (n_depth > 0) name += " @ d" + std::to_string(n_depth);
  return name;
}

std::vector<double> TestResult::samples_ts() const {
  std::vector<double> ts;
  for (double s : seconds)
    ts.push_back(s > 0.0 ? static_cast<double>(tokens()) / s : 0.0);
  return ts;
}
double TestResult::avg_ts() const {
  return mean(samples_ts());
}
double TestResult::stddev_ts() const {
  return sample_stddev(samples_ts());
}
double TestResult::avg_seconds() const {
  return mean(seconds);
}
double TestResult::stddev_seconds() const {
  return sample_stddev(seconds);
}
std::optional<double> TestResult::gb_per_s() const {
  if (kind != TestKind::kGeneration) return std::nullopt;
  return static_cast<double>(model.matrix_bytes) * avg_ts() / 1e9;
}
std::optional<double> TestResult::gflop_per_s() const {
  if (kind != TestKind::kPrompt || avg_seconds() <= 0.0) return std::nullopt;
  return model.prefill_flops(n_prompt) / avg_seconds() / 1e9;
}

// --- formatting ---

std::string format_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024.0 * 1024.0) return fixed(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
  return fixed(b / (1024.0 * 1024.0), 2) + " MiB";
}

std::string format_params(std::uint64_t params) {
  const double p = static_cast<double>(params);
  if (p >= 1e9) return fixed(p / 1e9, 2) + " B";
  if (p >= 1e6) return fixed(p / 1e6, 2) + " M";
  return fixed(p / 1e3, 2) + " K";
}

std::string render_results(const std::vector<TestResult>& rows, OutputFormat format) {
  if (format == OutputFormat::kMarkdown) {
    std::vector<std::vector<std::string>> cells;
    for (const TestResult& r : rows) {
      cells.push_back({r.model.name, format_size(r.model.size_bytes), format_params(r.model.params),
                       r.backend, std::to_string(r.threads), r.test_name(),
                       fixed(r.avg_ts(), 2) + " ± " + fixed(r.stddev_ts(), 2),
                       r.gb_per_s() ? fixed(*r.gb_per_s(), 2) : std::string("-"),
                       r.gflop_per_s() ? fixed(*r.gflop_per_s(), 2) : std::string("-")});
    }
    return markdown_table(
        {"model", "size", "params", "backend", "threads", "test", "t/s", "GB/s", "GFLOP/s"},
        {false, true, true, false, true, true, true, true, true}, cells);
  }
  if (format == OutputFormat::kCsv) {
    std::ostringstream out;
    out << "model,model_file,model_type,size_bytes,params,backend,threads,test,n_prompt,n_gen,"
           "repetitions,avg_ts,stddev_ts,avg_ns,stddev_ns,gb_per_s,gflop_per_s,samples_ts,n_"
           "depth\n";
    for (const TestResult& r : rows) {
      std::string samples;
      for (double ts : r.samples_ts()) {
        if (!samples.empty()) samples += ';';
        samples += fixed(ts, 3);
      }
      out << csv_field(r.model.name) << ',' << csv_field(r.model.file) << ','
          << csv_field(r.model.type) << ',' << r.model.size_bytes << ',' << r.model.params << ','
          << r.backend << ',' << r.threads << ',' << r.test_name() << ',' << r.n_prompt << ','
          << r.n_gen << ',' << r.seconds.size() << ',' << fixed(r.avg_ts(), 3) << ','
          << fixed(r.stddev_ts(), 3) << ',' << fixed(r.avg_seconds() * 1e9, 0) << ','
          << fixed(r.stddev_seconds() * 1e9, 0) << ',' << optional_number(r.gb_per_s(), 3) << ','
          << optional_number(r.gflop_per_s(), 3) << ',' << samples << ',' << r.n_depth << '\n';
    }
    return out.str();
  }
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const TestResult& r : rows) {
    nlohmann::ordered_json row;
    row["model"] = r.model.name;
    row["model_file"] = r.model.file;
    row["model_type"] = r.model.type;
    row["size_bytes"] = r.model.size_bytes;
    row["params"] = r.model.params;
    row["backend"] = r.backend;
    row["threads"] = r.threads;
    row["test"] = r.test_name();
    row["n_prompt"] = r.n_prompt;
    row["n_gen"] = r.n_gen;
    row["n_depth"] = r.n_depth;
    row["repetitions"] = r.seconds.size();
    row["avg_ts"] = r.avg_ts();
    row["stddev_ts"] = r.stddev_ts();
    row["avg_ns"] = r.avg_seconds() * 1e9;
    row["stddev_ns"] = r.stddev_seconds() * 1e9;
    row["gb_per_s"] = r.gb_per_s() ? nlohmann::ordered_json(*r.gb_per_s()) : nullptr;
    row["gflop_per_s"] = r.gflop_per_s() ? nlohmann::ordered_json(*r.gflop_per_s()) : nullptr;
    row["samples_ts"] = r.samples_ts();
    row["matrix_bytes"] = r.model.matrix_bytes;
    row["matrix_params"] = r.model.matrix_params;
    array.push_back(std::move(row));
  }
  return array.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string render_bandwidth(const BandwidthResult& result, OutputFormat format) {
  std::string test("read ");
  test += format_size(result.bytes);
  if (format == OutputFormat::kMarkdown) {
    return markdown_table({"test", "method", "threads", "passes", "best GB/s", "median GB/s"},
                          {false, false, true, true, true, true},
                          {{test, result.method, std::to_string(result.threads),
                            std::to_string(result.pass_gb_per_s.size()), fixed(result.best(), 2),
                            fixed(result.median(), 2)}});
  }
  if (format == OutputFormat::kCsv) {
    std::string csv("test,method,threads,bytes,passes,best_gb_per_s,median_gb_per_s\n");
    return csv + csv_field(test) + "," + result.method + "," + std::to_string(result.threads) +
           "," + std::to_string(result.bytes) + "," + std::to_string(result.pass_gb_per_s.size()) +
           "," + fixed(result.best(), 3) + "," + fixed(result.median(), 3) + "\n";
  }
  nlohmann::ordered_json out;
  out["test"] = test;
  out["method"] = result.method;
  out["threads"] = result.threads;
  out["bytes"] = result.bytes;
  out["passes"] = result.pass_gb_per_s.size();
  out["best_gb_per_s"] = result.best();
  out["median_gb_per_s"] = result.median();
  out["pass_gb_per_s"] = result.pass_gb_per_s;
  return out.dump(2) + "\n";
}

std::string render_products(const ProductsResult& result, OutputFormat format) {
  const std::string file = result.file.substr(result.file.find_last_of('/') + 1);
  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json out;
    out["model_filename"] = file;
    out["threads"] = result.threads;
    out["matrices"] = result.matrices;
    out["matrix_bytes"] = result.matrix_bytes;
    out["passes_per_round"] = result.passes_per_round;
    out["median_read_gb_per_s"] = result.median_read();
    out["median_products_gb_per_s"] = result.median_products();
    out["median_products_over_read"] = result.median_ratio();
    nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
    for (const ProductsRound& r : result.rounds) {
      rounds.push_back({{"read_gb_per_s", r.read_gb_per_s},
                        {"products_gb_per_s", r.products_gb_per_s},
                        {"products_over_read", r.products_gb_per_s / r.read_gb_per_s}});
    }
    out["rounds"] = rounds;
    return out.dump(2) + "\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < result.rounds.size(); ++i) {
    const ProductsRound& r = result.rounds[i];
    rows.push_back({std::to_string(i + 1), fixed(r.read_gb_per_s, 2), fixed(r.products_gb_per_s, 2),
                    fixed(r.products_gb_per_s / r.read_gb_per_s, 3)});
  }
  rows.push_back({"median", fixed(result.median_read(), 2), fixed(result.median_products(), 2),
                  fixed(result.median_ratio(), 3)});
  const std::string title = file + ": " + std::to_string(result.matrices) + " matrices, " +
                            format_size(result.matrix_bytes) + " (" +
                            std::to_string(result.passes_per_round) + " passes a round), " +
                            std::to_string(result.threads) + " threads";
  if (format == OutputFormat::kCsv) {
    std::string csv(
        "model_filename,threads,matrices,matrix_bytes,round,read_gb_per_s,"
        "products_gb_per_s,products_over_read\n");
    for (const auto& row : rows) {
      csv += csv_field(file) + "," + std::to_string(result.threads) + "," +
             std::to_string(result.matrices) + "," + std::to_string(result.matrix_bytes) + "," +
             row[0] + "," + row[1] + "," + row[2] + "," + row[3] + "\n";
    }
    return csv;
  }
  return title + "\n\n" +
         markdown_table({"round", "read GB/s", "products GB/s", "products / read"},
                        {false, true, true, true}, rows);
}

}  // namespace eredu::bench
