#pragma once
// The two renderings of a Report: aligned text for people, one JSON object for programs.

#include <string>

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "report.hpp"

namespace eredu::inspect {

struct OutputOptions {
  ValueLimits limits;
  bool tensors = true;  // print the tensor table / "tensors" array
};

// The whole report as text, ending in a newline.
[[nodiscard]] std::string render_text(const Report& report, const OutputOptions& options);

// The whole report as one JSON object, fields in a fixed order (see json_output.cpp).
[[nodiscard]] nlohmann::ordered_json render_json(const Report& report,
                                                 const OutputOptions& options);

}  // namespace eredu::inspect
