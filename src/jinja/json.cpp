// nlohmann::ordered_json to Value (ordered_json keeps the keys in document order, as Python's
// json.loads does).

#include "eredu/jinja/json.hpp"

namespace eredu::jinja {

Value from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(json.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = json.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<std::int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json)
        items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = std::make_shared<DictObject>();
      d->entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) {
        d->entries.emplace_back(Value(key), from_json(item));
      }
      return Value(std::move(d));
    }
    default:
      return Value::none();  // binary and discarded values do not come from JSON text
  }
}

}  // namespace eredu::jinja
