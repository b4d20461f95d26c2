#pragma once
// llama.cpp's recorded greedy runs (../shared/reference/*-greedy.json, see its README) and the
// teacher-forced comparison of a model's log-probabilities against them.
//
// Teacher forcing: the model is fed prompt_tokens + generated_tokens; the logits after input
// position prompt_len - 1 + i predict generated token i, and are compared with top5_logprobs[i].
// Nothing here depends on how the logits were produced (float64 reference or a backend).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace eredu::testing::reference {

struct TokenLogprob {
  int id = 0;
  double logprob = 0.0;
};

struct GreedyCase {
  std::string prompt;
  std::vector<int> prompt_tokens;
  std::vector<int> generated_tokens;
  std::vector<std::vector<TokenLogprob>> top5;  // one list per generated token, best first

  // prompt_tokens followed by generated_tokens.
  [[nodiscard]] std::vector<int> teacher_forced_input() const {
    std::vector<int> all = prompt_tokens;
    all.insert(all.end(), generated_tokens.begin(), generated_tokens.end());
    return all;
  }
};

// Reads a recorded greedy run. Throws std::runtime_error (file missing, malformed JSON, or lists
// whose lengths disagree).
inline std::vector<GreedyCase> load_greedy_cases(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<GreedyCase> cases;
  for (const auto& c : doc.at("cases")) {
    GreedyCase gc;
    gc.prompt = c.at("prompt").get<std::string>();
    gc.prompt_tokens = c.at("prompt_tokens").get<std::vector<int>>();
    gc.generated_tokens = c.at("generated_tokens").get<std::vector<int>>();
    for (const auto& position : c.at("top5_logprobs")) {
      std::vector<TokenLogprob> top;
      for (const auto& entry : position) {
        top.push_back({entry.at("id").get<int>(), entry.at("logprob").get<double>()});
      }
      gc.top5.push_back(std::move(top));
    }
    if (gc.top5.size() != gc.generated_tokens.size() || gc.prompt_tokens.empty()) {
      throw std::runtime_error(path.string() + ": case '" + gc.prompt +
                               "' has mismatched list lengths");
    }
    cases.push_back(std::move(gc));
  }
  return cases;
}

// log-softmax in double, with the max subtracted first.
template <typename T>
std::vector<double> log_softmax_of(std::span<const T> logits) {
  double max_logit = -std::numeric_limits<double>::infinity();
  for (T value : logits)
    max_logit = std::max(max_logit, static_cast<double>(value));
  double sum = 0.0;
  for (T value : logits)
    sum += std::exp(static_cast<double>(value) - max_logit);
  const double log_sum = max_logit + std::log(sum);
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i)
    out[i] = static_cast<double>(logits[i]) - log_sum;
  return out;
}

// What one teacher-forced comparison measured.
struct TeacherForcedStats {
  std::size_t positions = 0;
  // max |model - llama.cpp| of the log-probability of the recorded (greedy) token.
  double max_abs_chosen = 0.0;
  // max |model - llama.cpp| over all five recorded tokens of every position.
  double max_abs_top5 = 0.0;
  // max over the same of |model - llama.cpp| / (1 + |llama.cpp logprob|).
  double max_relative_top5 = 0.0;
  std::size_t clear_margin_positions = 0;  // positions whose recorded top1 - top2 > margin
  std::size_t top1_disagreements = 0;      // among those, where the model's argmax differs
  std::size_t worst_position = 0;          // generated index of max_abs_chosen
};

// Compares, for every generated position of `c`, the model's log-probabilities (from `logits`,
// one row per input position of c.teacher_forced_input(), at least prompt_len - 1 + n_generated
// rows) against the recording. `margin` selects the positions where top-1 must agree.
template <typename Row>
TeacherForcedStats compare_teacher_forced(const GreedyCase& c, const std::vector<Row>& logits,
                                          double margin) {
  TeacherForcedStats stats;
  const std::size_t first = c.prompt_tokens.size() - 1;
  for (std::size_t i = 0; i < c.generated_tokens.size(); ++i) {
    const auto& row = logits.at(first + i);
    using T = std::remove_cvref_t<decltype(row[0])>;
    const std::vector<double> lp = log_softmax_of(std::span<const T>(row.data(), row.size()));
    const std::vector<TokenLogprob>& top = c.top5[i];
    for (std::size_t j = 0; j < top.size(); ++j) {
      const double err = std::abs(lp.at(static_cast<std::size_t>(top[j].id)) - top[j].logprob);
      stats.max_abs_top5 = std::max(stats.max_abs_top5, err);
      stats.max_relative_top5 =
          std::max(stats.max_relative_top5, err / (1.0 + std::abs(top[j].logprob)));
    }
    const double chosen_err =
        std::abs(lp.at(static_cast<std::size_t>(c.generated_tokens[i])) - [&] {
          for (const TokenLogprob& t : top)
            if (t.id == c.generated_tokens[i]) return t.logprob;
          throw std::runtime_error("greedy token missing from its top5");
        }());
    if (chosen_err > stats.max_abs_chosen) {
      stats.max_abs_chosen = chosen_err;
      stats.worst_position = i;
    }
    if (top.size() >= 2 && top[0].logprob - top[1].logprob > margin) {
      ++stats.clear_margin_positions;
      const auto argmax = static_cast<int>(std::max_element(lp.begin(), lp.end()) - lp.begin());
      if (argmax != top[0].id) ++stats.top1_disagreements;
    }
    ++stats.positions;
  }
  return stats;
}

}  // namespace eredu::testing::reference
