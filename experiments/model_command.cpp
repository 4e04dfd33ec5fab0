#include "experiments/model_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>

#include "algorithms/qr_tree.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/output_path.hpp"
#include "models/comm_model.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"

namespace tessera {

namespace {

CommAlgo parse_algo(const std::string& algo) {
  if (algo == "cholesky") return CommAlgo::Cholesky;
  if (algo == "qr") return CommAlgo::Qr;
  throw InputError("--algo '" + algo + "' is not one of: cholesky, qr");
}

std::string table(const CommReport& r) {
  const bool chol = r.algo == CommAlgo::Cholesky;
  const char* section = chol ? "A.2.1" : r.binary_tree ? "binary tree" : "A.2.2";
  const char* peer = chol ? "PDPOTRF" : "PDGEQRF";
  const CommShape& c = r.shape;
  std::string out = fmt::format("comm model (000 App. A.2, Table 1): {} n={} B={} s={} grid={}x{} P={}",
                                chol ? "cholesky" : "qr", c.n, c.B, c.s, c.Pr, c.Pc, c.Pr * c.Pc);
  if (!chol) out += fmt::format(" v={}", r.v);
  if (r.binary_tree) out += fmt::format(" tree=binary ib={}", r.ib);
  out += fmt::format(" nb={}\n", r.nb);
  const auto row = [&out](const std::string& name, double value) {
    out += fmt::format("{:<34} {:>20.3f}\n", name, value);
  };
  out += fmt::format("{:<34} {:>20}\n", "row", "value");
  row(fmt::format("msg   (summation, {})", section), r.msg_sum);
  row(fmt::format("msg   (closed form, {})", section), r.msg_closed);
  row(fmt::format("words (summation, {})", section), r.word_sum);
  row(fmt::format("words (closed form, {})", section), r.word_closed);
  row(fmt::format("{} msg (Table 1)", peer), r.scalapack_messages);
  row(fmt::format("{} words (Table 1)", peer), r.scalapack_words);
  row("lower bound msg (Omega)", r.lower_bound_messages);
  row("lower bound words (Omega)", r.lower_bound_words);
  return out;
}

nlohmann::json to_json(const CommReport& r) {
  const bool chol = r.algo == CommAlgo::Cholesky;
  const CommShape& c = r.shape;
  return {
      {"model", "comm"},
      {"algo", chol ? "cholesky" : "qr"},
      {"n", c.n},
      {"B", c.B},
      {"s", c.s},
      {"grid", {c.Pr, c.Pc}},
      {"P", c.Pr * c.Pc},
      {"v", chol ? nlohmann::json(nullptr) : nlohmann::json(r.v)},
      {"qr_tree", chol ? nlohmann::json(nullptr) : nlohmann::json(r.binary_tree ? "binary" : "flat")},
      {"ib", r.binary_tree ? nlohmann::json(r.ib) : nlohmann::json(nullptr)},
      {"nb", r.nb},
      {"units", {{"words", "matrix elements"}, {"messages", "messages sent by the busiest process"}}},
      {"tessera",
       {{"messages_summation", r.msg_sum},
        {"messages_closed_form", r.msg_closed},
        {"words_summation", r.word_sum},
        {"words_closed_form", r.word_closed}}},
      {"scalapack",
       {{"routine", chol ? "PDPOTRF" : "PDGEQRF"}, {"messages", r.scalapack_messages}, {"words", r.scalapack_words}}},
      {"lower_bound", {{"messages", r.lower_bound_messages}, {"words", r.lower_bound_words}}},
  };
}

}  // namespace

ModelCommand::ModelCommand(CLI::App& app) {
  model_ = app.add_subcommand("model", "evaluate a performance model without running anything");
  model_->require_subcommand(1);
  auto* comm = comm_ = model_->add_subcommand(
      "comm", "messages and words (matrix elements) of the busiest process: 000 App. A.2 and Table 1");
  comm->add_option("--algo", algo_, "cholesky | qr")->required();
  comm->add_option("--n", n_, "matrix order")->required();
  comm->add_option("--B", B_, "top-level tile size")->required();
  comm->add_option("--s", s_, "partitions of each top-level tile")->required();
  comm->add_option("--grid", grid_, "process grid PrxPc, e.g. 2x3")->required();
  comm->add_option(
      "--v", v_,
      "QR virtual tile height in tile rows; default that of tessera run for the same shape (n/(B*Pr) is the paper's analysis)");
  comm->add_option("--nb", nb_, "ScaLAPACK block size of the PDPOTRF/PDGEQRF rows; default B");
  comm->add_option("--qr-tree", qr_tree_,
                   "QR's reduction tree across node rows: flat (A.2.2, the default) or binary (tessera's own count "
                   "of its hierarchical QR, models/comm_model.hpp)");
  comm->add_option("--ib", ib_, "QR --qr-tree binary: the T factors' inner blocking (default 32, tessera run's)");
  comm->add_option("--json", json_path_, "also write the rows as one JSON object to FILE");
  kernels_ = model_->add_subcommand(
      "kernels",
      "leave-one-out errors of a machine file's calibrated kernel models: each measurement predicted from the others, "
      "by flops and by shape interpolation");
  kernels_->add_option("--machine", machine_, "machine file")->required();
  kernels_->add_option("--model", model_name_, "only this kernel model of the file");
}

int ModelCommand::run_kernels() const {
  const platform::Machine machine = platform::Machine::load(machine_);
  bool any = false;
  for (const auto& [name, model] : machine.models) {
    if (!model_name_.empty() && name != model_name_) continue;
    const auto* cal = dynamic_cast<const models::CalibratedModel*>(model.get());
    if (!cal) continue;
    any = true;
    std::cout << fmt::format("{}: {} measurements\n{:<10} {:>4} {:>6} | {:>22} | {:>22}\n", name, cal->entries().size(),
                             "kernel", "prec", "count", "flops: median / worst", "shape: median / worst");
    std::map<std::pair<std::string, char>, std::array<std::vector<double>, 2>> errs;
    for (const models::Interpolation how : {models::Interpolation::Flops, models::Interpolation::Shape})
      for (const models::LeftOut& x : models::leave_one_out(cal->entries(), how))
        errs[{kernel_name(x.entry.kernel), x.entry.precision}][how == models::Interpolation::Shape].push_back(
            std::abs(x.predicted_s / x.entry.median_s - 1) * 100);
    std::array<std::vector<double>, 2> all;
    const auto med_worst = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.empty() ? std::string("-") : fmt::format("{:.1f}% / {:.1f}%", v[v.size() / 2], v.back());
    };
    for (const auto& [key, e] : errs) {
      std::cout << fmt::format("{:<10} {:>4} {:>6} | {:>22} | {:>22}\n", key.first, key.second, e[0].size(),
                               med_worst(e[0]), med_worst(e[1]));
      for (int i = 0; i < 2; ++i) all[i].insert(all[i].end(), e[i].begin(), e[i].end());
    }
    std::cout << fmt::format("{:<10} {:>4} {:>6} | {:>22} | {:>22}\n", "all", "", all[0].size(), med_worst(all[0]),
                             med_worst(all[1]));
  }
  if (!any)
    throw InputError("--machine " + machine_ + " has no calibrated kernel model" +
                     (model_name_.empty() ? std::string() : " named '" + model_name_ + "'"));
  return 0;
}

int ModelCommand::run() const {
  if (kernels_->parsed()) return run_kernels();
  const auto [Pr, Pc] = parse_grid(grid_);
  const CommAlgo algo = parse_algo(algo_);
  const bool binary = parse_qr_tree(qr_tree_) == QrTreeKind::Binary;
  if (comm_->get_option("--json")->count() > 0 && json_path_.empty()) throw InputError("--json '': give a file");
  check_output_path({"--json", json_path_});
  const CommReport r = comm_report(algo, CommShape{n_, B_, s_, Pr, Pc}, v_, nb_, {binary, ib_});
  std::cout << table(r) << std::flush;
  if (!json_path_.empty())
    write_output({"--json", json_path_}, [&](std::ostream& f) { f << to_json(r).dump(2) << '\n'; });
  return 0;
}

}  // namespace tessera
