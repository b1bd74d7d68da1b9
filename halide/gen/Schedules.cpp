//===- Schedules.cpp - loops and vectors for the FFN's pipelines ----------===//
//
// Strategy mode, the GEMMs (Up over up panels, Down over down panels):
//  - the output's columns split into panels (pw = up_panel or down_panel),
//    each panel's lanes vectorized by `lanes` and unrolled: the register
//    tile's width;
//  - rows split into tiles of constant height, one specialization per
//    height (mr, then 4, 2 below it, then 1) with ShiftInwards, so any row
//    count works and every tile's loops have constant extents; a tile that
//    shifts recomputes rows with the same operations, so the same bits;
//  - loop order panels > row tiles > (rows x lanes): a panel of weights
//    stays in cache while the call's rows pass over it;
//  - the accumulators live per tile on the stack (registers once LLVM has
//    promoted them), k outermost and sequential: every row of every tile
//    sums in the same order (batch invariance);
//  - no parallel(): ffnc's runtime splits the panels and rows among its
//    threads, and mc (rows per call) is the stub's loop.
//
//===----------------------------------------------------------------------===//

#include "Schedules.h"

#include <algorithm>
#include <set>
#include <sys/stat.h>

using namespace Halide;

namespace ffnc::halide {

namespace {

struct Plugin {
  const char *name;   ///< ours (the request's)
  const char *halide; ///< Halide's registered name
  const char *path;
};
const Plugin kPlugins[] = {
    {"adams2019", "Adams2019", FFNC_HALIDE_PLUGIN_ADAMS2019},
    {"li2018", "Li2018", FFNC_HALIDE_PLUGIN_LI2018},
    {"mullapudi2016", "Mullapudi2016", FFNC_HALIDE_PLUGIN_MULLAPUDI2016},
};

const Plugin *pluginOf(const std::string &name) {
  for (const Plugin &p : kPlugins)
    if (name == p.name)
      return &p;
  return nullptr;
}

bool exists(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0;
}

/// Row-tile heights, tallest first: mr, then 4 and 2 where below it, then 1.
std::vector<int> tileHeights(int mr) {
  std::vector<int> heights = {mr};
  for (int t : {4, 2, 1})
    if (t < mr)
      heights.push_back(t);
  return heights;
}

void scheduleGemm(BuiltPipeline &p, const HalideKernel &k) {
  const Schedule &s = k.schedule;
  const int pw = p.panel;
  const int lanes = static_cast<int>(std::min<int64_t>(s.lanes, pw));
  Func out = p.output;
  Var co("co"), ci("ci"), ro("ro"), ri("ri");
  // Up writes whole panels (H has room for them). Down writes Y up to
  // d_model, which may end inside its last panel: that panel's stores are
  // guarded (the stub's output crop ends there), its sums are not.
  const bool columnTail =
      p.spec.role == Role::Down && !k.postNorm() && k.dModel % s.downPanel != 0;
  std::vector<ImageParam> weights;
  for (const char *w : {"w_up", "w_gate", "w_down"})
    if (p.buffers.count(w))
      weights.push_back(p.buffers.at(w));

  auto tile = [&](Stage stage, int height) {
    stage
        .split(p.c, co, ci, pw,
               columnTail ? TailStrategy::GuardWithIf : TailStrategy::RoundUp)
        .split(p.r, ro, ri, height, TailStrategy::ShiftInwards)
        .reorder(ci, ri, ro, co)
        .vectorize(ci, lanes)
        .unroll(ci)
        .unroll(ri);
    // The next panel's weights while this one computes.
    if (s.prefetch)
      for (ImageParam &w : weights)
        stage.prefetch(w, co, co, 1);
  };
  Expr rows = out.output_buffer().dim(1).extent();
  for (int height : tileHeights(static_cast<int>(s.mr)))
    if (height > 1)
      tile(out.specialize(rows >= height), height);
  tile(out, 1);

  for (Func acc : {p.acc, p.gateAcc}) {
    if (!acc.defined())
      continue;
    // A whole panel even where Y's crop ends inside it: constant extents
    // (the weights are zero-padded there; the sums are not stored).
    acc.compute_at(out, ro)
        .store_in(MemoryType::Stack)
        .bound_extent(p.c, pw)
        .vectorize(p.c, lanes)
        .unroll(p.c)
        .unroll(p.r);
    acc.update()
        .reorder(p.c, p.r, p.k)
        .vectorize(p.c, lanes)
        .unroll(p.c)
        .unroll(p.r);
  }
  // Gate and up in one k loop: each input element is loaded once for both.
  if (p.gateAcc.defined())
    p.gateAcc.update().compute_with(p.acc.update(), p.k);
}

void scheduleStats(Func out, NormStats &st, Var r) {
  for (Func f : {st.sum, st.mean, st.sumSq, st.inv})
    if (f.defined())
      f.compute_at(out, r);
}

/// Rows one at a time: the statistics (serial sums over the columns), then
/// the row's columns in vectors.
void scheduleNorm(BuiltPipeline &p, const HalideKernel &k) {
  const int lanes = static_cast<int>(k.schedule.lanes);
  scheduleStats(p.output, p.norm, p.r);
  p.output.vectorize(p.c, lanes,
                     k.dModel >= lanes ? TailStrategy::ShiftInwards
                                       : TailStrategy::GuardWithIf);
}

void schedulePack(BuiltPipeline &p, const HalideKernel &k) {
  const int lanes =
      static_cast<int>(std::min<int64_t>(k.schedule.lanes, p.panel));
  p.output.vectorize(p.c, lanes);
}

/// The autoschedulers split the output's loops with ShiftInwards or
/// RoundUp, which write outside the caller's rows when a call has fewer of
/// them than a tile (M = 1 under an estimate of 64): Halide's bounds check
/// then fails the call. GuardWithIf is legal for every split and never
/// writes outside; the tiles it guards compute the same values. (Their
/// inputs are clamped to the buffers in Pipelines.cpp, so the intermediates
/// they tile stay in bounds too.) No public API edits a split after the
/// fact, hence Internal.
void guardOutputSplits(Func out) {
  auto guard = [](Internal::StageSchedule &schedule) {
    for (Internal::Split &split : schedule.splits())
      if (split.split_type == Internal::Split::SplitVar)
        split.tail = TailStrategy::GuardWithIf;
  };
  Internal::Function f = out.function();
  guard(f.definition().schedule());
  for (size_t i = 0; i < f.updates().size(); ++i)
    guard(f.update_schedule(static_cast<int>(i)));
  for (Internal::Specialization &s : f.definition().specializations())
    guard(s.definition.schedule());
}

/// Auto mode: estimates for M = m_estimate rows, then the plugin.
std::string scheduleWhole(BuiltPipeline &p, const HalideKernel &k,
                          const Target &target) {
  const int d = static_cast<int>(k.dModel), f = static_cast<int>(k.dFf);
  const int m = static_cast<int>(k.schedule.mEstimate);
  for (auto &[name, buf] : p.buffers) {
    if (name == "x")
      buf.set_estimates({{0, d}, {0, m}});
    else if (name == "w_up" || name == "w_gate")
      buf.set_estimates({{0, f}, {0, d}});
    else if (name == "w_down")
      buf.set_estimates({{0, d}, {0, f}});
    else if (name == "b_up" || name == "b_gate")
      buf.set_estimates({{0, f}});
    else
      buf.set_estimates({{0, d}});
  }
  p.output.set_estimates({{0, d}, {0, m}});
  const Plugin *plugin = pluginOf(k.schedule.autoscheduler);
  MachineParams machine(static_cast<int>(k.schedule.parallelism), 16 << 20, 40);
  AutoSchedulerResults results =
      Halide::Pipeline(p.output).auto_schedule(plugin->halide, target, machine);
  guardOutputSplits(p.output);
  return results.schedule_source +
         "\n// ffnc-halide-gen: every split of the output is GuardWithIf.\n";
}

} // namespace

std::string schedulePipeline(BuiltPipeline &p, const HalideKernel &k,
                             const Target &target) {
  switch (p.spec.role) {
  case Role::Up:
  case Role::Down:
    scheduleGemm(p, k);
    return "";
  case Role::NormIn:
  case Role::NormOut:
    scheduleNorm(p, k);
    return "";
  case Role::PackUp:
  case Role::PackGate:
  case Role::PackDown:
    schedulePack(p, k);
    return "";
  case Role::Whole:
    return scheduleWhole(p, k, target);
  }
  return "";
}

std::vector<std::string> availableAutoschedulers() {
  std::vector<std::string> names;
  for (const Plugin &p : kPlugins)
    if (exists(p.path))
      names.push_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

bool loadAutoscheduler(const std::string &name, std::string &error) {
  static std::set<std::string> loaded;
  if (loaded.count(name))
    return true;
  const Plugin *p = pluginOf(name);
  if (!p || !exists(p->path)) {
    error = "autoscheduler '" + name + "': plugin " +
            (p ? std::string(p->path) + " not found" : "unknown") +
            " (this Halide ships: ";
    std::vector<std::string> names = availableAutoschedulers();
    for (size_t i = 0; i < names.size(); ++i)
      error += (i ? ", " : "") + names[i];
    error += names.empty() ? "none)" : ")";
    return false;
  }
  load_plugin(p->path);
  loaded.insert(name);
  return true;
}

} // namespace ffnc::halide
