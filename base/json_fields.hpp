#pragma once
// Reading machine and model files: every failure is an InputError that names
// the file, the field (as a dotted path) and the offending value.
//
// A number may be written bare or as {"value": x, "source": "where it comes
// from"}, so every assumed figure can carry its source next to it.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace tessera::models {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& j, std::string file, std::string path)
      : j_(j), file_(std::move(file)), path_(std::move(path)) {
    if (!j_.is_object()) fail_here("must be an object, got " + shown(j_));
  }

  const std::string& file() const { return file_; }
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) const { return j_.contains(key); }
  const nlohmann::json& json() const { return j_; }

  const nlohmann::json& require(const std::string& key) const {
    if (!j_.contains(key)) throw InputError(file_ + ": missing field '" + field(key) + "'");
    return j_.at(key);
  }
  JsonFields object(const std::string& key) const { return JsonFields(require(key), file_, field(key)); }

  std::string string(const std::string& key) const {
    const auto& v = require(key);
    if (!v.is_string()) fail(key, v, "must be a string");
    return v.get<std::string>();
  }
  // A finite number (bare or {"value": x, "source": ...}) >= `min`, or > `min` when `strict`.
  double number(const std::string& key, double min = -HUGE_VAL, bool strict = false) const {
    const auto& raw = require(key);
    const nlohmann::json* v = &raw;
    if (raw.is_object()) {
      if (!raw.contains("value")) fail(key, raw, "must be a number or {\"value\": number, \"source\": ...}");
      v = &raw.at("value");
    }
    if (!v->is_number()) fail(key, raw, "must be a number");
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < min || (strict && x == min))
      fail(key, raw, std::string("must be ") + (strict ? "> " : ">= ") + num(min));
    return x;
  }
  double positive(const std::string& key) const { return number(key, 0.0, true); }
  double non_negative(const std::string& key) const { return number(key, 0.0, false); }
  int integer(const std::string& key, int min) const {
    const double x = number(key, min);
    if (x != std::floor(x) || x > 1e9) fail(key, require(key), "must be an integer >= " + std::to_string(min));
    return static_cast<int>(x);
  }

  [[noreturn]] void fail(const std::string& key, const nlohmann::json& value, const std::string& why) const {
    throw InputError(file_ + ": field '" + field(key) + "' = " + shown(value) + ": " + why);
  }
  [[noreturn]] void fail_here(const std::string& why) const {
    throw InputError(file_ + ": field '" + (path_.empty() ? std::string("(top level)") : path_) + "' " + why);
  }

  static std::string shown(const nlohmann::json& v) {
    std::string s = v.dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
  }

 private:
  static std::string num(double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const nlohmann::json& j_;
  std::string file_, path_;
};

}  // namespace tessera::models
