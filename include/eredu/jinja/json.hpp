#pragma once
// JSON data as template values: objects become insertion-ordered dicts, arrays lists, numbers
// int or float as JSON wrote them (unsigned values past int64 become floats).

#include <nlohmann/json.hpp>

#include "eredu/jinja/value.hpp"

namespace eredu::jinja {

[[nodiscard]] Value from_json(const nlohmann::ordered_json& json);

}  // namespace eredu::jinja
