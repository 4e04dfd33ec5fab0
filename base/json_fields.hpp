#pragma once
// Reading machine and model files: every failure is an InputError that names
// the file, the field (as a dotted path) and the offending value.
//
// A number may be written bare or as {"value": x, "source": "where it comes
// from"}, so every assumed figure can carry its source next to it.
#include <cmath>
#include <cstdio>
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
      fail(key, *v, std::string("must be ") + (strict ? "> " : ">= ") + num(min));
    return x;
  }
  // A number from `lo` to `hi`: where the simulator's arithmetic holds (a link of a few bytes per second, a kernel of
  // centuries, a GPU of 2^64 bytes are no machine), or, for a count, what its type holds.
  // `above`: strictly above `lo`.
  double within(const std::string& key, double lo, double hi, bool above = false) const {
    const double x = number(key);
    if (x < lo || x > hi || (above && x == lo))
      fail(key, value(key), std::string("must be ") + (above ? "above " : "from ") + num(lo) + " to " + num(hi));
    return x;
  }
  double positive(const std::string& key) const { return number(key, 0.0, true); }
  double non_negative(const std::string& key) const { return number(key, 0.0, false); }
  int integer(const std::string& key, int min, int max = 1000000000) const {
    const double x = number(key, min);
    if (x != std::floor(x) || x > max)
      fail(key, value(key), "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return static_cast<int>(x);
  }

  [[noreturn]] void fail(const std::string& key, const nlohmann::json& value, const std::string& why) const {
    throw InputError(file_ + ": field '" + field(key) + "' = " + shown(value) + ": " + why);
  }
  [[noreturn]] void fail_here(const std::string& why) const {
    throw InputError(file_ + ": field '" + (path_.empty() ? std::string("(top level)") : path_) + "' " + why);
  }

  // The field's number where it is written {"value": x, "source": ...}, else the field (for messages).
  const nlohmann::json& value(const std::string& key) const {
    const auto& raw = require(key);
    return raw.is_object() && raw.contains("value") ? raw.at("value") : raw;
  }
  static std::string shown(const nlohmann::json& v) {
    std::string s = v.dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
  }

 private:
  static std::string num(double x) {
    if (x != 0 && (std::fabs(x) >= 1e7 || std::fabs(x) < 1e-3)) {  // 1e+15, 1e-06
      char text[32];
      std::snprintf(text, sizeof text, "%g", x);
      return text;
    }
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const nlohmann::json& j_;
  std::string file_, path_;
};

}  // namespace tessera::models
