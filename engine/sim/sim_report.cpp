// sim_report.cpp - the simulator's report as JSON (sim_report.h): the one place its keys are spelt, used
// by `megacluster simulate`, the scenario player and the app's state export.
#include "sim/sim_report.h"

#include <cmath>

namespace mc::sim {

using nlohmann::json;

namespace {

json spans_json(const std::vector<SpanReport>& spans) {
  json a = json::array();
  for (const SpanReport& s : spans)
    a.push_back({{"kind", to_string(s.kind)},
                 {"start_s", s.start_s},
                 {"end_s", s.end_s},
                 {"micro_batch", s.micro_batch},
                 {"chunk", s.chunk}});
  return a;
}

json timeline_json(const TimelineReport& t) {
  return {{"gpu", t.gpu},         {"replica", t.replica},        {"stage", t.stage},
          {"tp_rank", t.tp_rank}, {"class", t.replica_class},    {"speed", t.speed},
          {"end_s", t.end_s},     {"spans", spans_json(t.spans)}};
}

json links_json(const LinksReport& l) {
  json cls = json::object();
  for (int c = 0; c < kLinkClasses; ++c)
    cls[to_string(LinkClass(c))] = {{"bytes", l.classes[size_t(c)].bytes},
                                    {"mean_utilisation", l.classes[size_t(c)].mean_utilisation}};
  json hot = json::array();
  for (const HotLinkReport& h : l.hottest)
    hot.push_back({{"link", h.link},
                   {"name", h.name},
                   {"class", to_string(h.cls)},
                   {"index", h.index},
                   {"utilisation", h.utilisation},
                   {"capacity_GBps", h.capacity_GBps}});
  json out = {{"classes", cls}, {"hottest", hot}, {"node_nic_utilisation", l.node_nic_utilisation}};
  if (l.has_series) {
    json ser = json::object();
    for (int c = 0; c < kLinkClasses; ++c) ser[to_string(LinkClass(c))] = l.class_series[size_t(c)];
    out["utilisation_series"] = {{"bin_s", l.series_bin_s}, {"classes", ser}};
    json hs = json::array();
    for (const LinkSeriesReport& s : l.hottest_series)
      hs.push_back({{"link", s.link},
                    {"name", s.name},
                    {"class", to_string(s.cls)},
                    {"index", s.index},
                    {"capacity_Bps", s.capacity_Bps},
                    {"bytes", s.bytes},
                    {"passive", s.passive},
                    {"mean_utilisation", s.mean_utilisation},
                    {"bucket_s", s.bucket_s},
                    {"t_s", s.t_s},
                    {"utilisation", s.utilisation}});
    out["hottest_series"] = std::move(hs);
  }
  return out;
}

json critical_path_json(const CriticalPathReport& cp) {
  json out = json::object();
  for (const auto& [k, v] : cp.seconds_by_kind) out[k + "_s"] = v;
  if (cp.has_steps) {
    json steps = json::array();
    for (const CriticalStepReport& st : cp.steps)
      steps.push_back({{"class", st.replica_class},
                       {"stage", st.stage},
                       {"kind", to_string(st.kind)},
                       {"start_s", st.start_s},
                       {"end_s", st.end_s}});
    out["steps"] = std::move(steps);
  }
  out["idle_s"] = cp.idle_s;
  out["stages"] = cp.stages;
  out["replica_classes"] = cp.replica_classes;
  return out;
}

// Infinite figures (no failures: no MTBF, no checkpoint interval) are written as null.
json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

}  // namespace

json to_json(const IterationReport& r) {
  json classes = json::array();
  for (int replicas : r.replica_class_replicas) classes.push_back({{"replicas", replicas}});
  const CriticalBreakdownReport& b = r.critical_gpu_breakdown;
  json breakdown = {{"compute", b.compute_s}, {"tp_comm", b.tp_comm_s}, {"pp_send", b.pp_send_s},
                    {"pp_wait", b.pp_wait_s}, {"dp_wait", b.dp_wait_s}, {"optimizer", b.optimizer_s},
                    {"idle", b.idle_s}};
  if (b.cp_comm_s > 0) breakdown["cp_comm"] = b.cp_comm_s;  // context parallel only
  const TopologyReport& t = r.topology;
  json sim = {{"events", r.events},
              {"flow_groups", r.flow_groups},
              {"rate_solves", r.rate_solves},
              {"wall_s", r.wall_s},
              {"events_per_s", r.events_per_s},
              {"replica_classes", classes},
              {"critical", {{"stage", r.critical_stage}, {"class", r.critical_class}}},
              {"critical_gpu_breakdown_s", breakdown},
              {"dp_algorithm", r.dp_algorithm},
              {"buckets_per_stage", r.buckets_per_stage},
              {"links", links_json(r.links)},
              {"topology",
               {{"nodes", t.nodes},
                {"gpus_per_node", t.gpus_per_node},
                {"leaves", t.leaves},
                {"spines", t.spines},
                {"nodes_per_leaf", t.nodes_per_leaf},
                {"oversubscription", t.oversubscription}}}};
  sim["critical_path"] = critical_path_json(r.critical_path);
  if (r.timeline) sim["timeline"] = timeline_json(*r.timeline);
  if (r.has_timelines) {
    json rows = json::array();
    for (const TimelineReport& t : r.timelines) rows.push_back(timeline_json(t));
    sim["timelines"] = std::move(rows);
  }
  return sim;
}

json to_json(const RunReport& r) {
  json by = json::object(), lost = json::object();
  for (int c = 0; c < kCauses; ++c) {
    by[to_string(Cause(c))] = r.interruptions_by_cause[size_t(c)];
    lost[to_string(Cause(c))] = r.lost_gpu_hours_by_cause[size_t(c)];
  }
  // Not lost to interruptions, so kept out of lost_gpu_hours: GPU time spent writing checkpoints, and GPU
  // time waiting for the data pipeline (zero unless it is slower than the GPUs).
  const json overhead = {{"checkpoint_writes", r.checkpoint_gpu_hours}, {"data_stall", r.data_stall_gpu_hours}};
  json ev = json::array();
  for (const RunEvent& e : r.events) {
    static const char* kinds[] = {"failure", "restart", "checkpoint", "done"};
    json j = {{"t_s", e.t_s}, {"kind", kinds[e.kind]}, {"progress", e.progress}};
    if (e.kind == RunEvent::failure || e.kind == RunEvent::restart) j["cause"] = to_string(e.cause);
    if (e.kind == RunEvent::failure) j["lost_s"] = e.lost_s;
    ev.push_back(std::move(j));
  }
  return {{"days", r.days},
          {"finished", r.finished},
          {"cancelled", r.cancelled},
          {"iterations_done", r.iterations_done},
          {"fraction_done", r.fraction_done},
          {"projected_days", finite_or_null(r.projected_days)},
          {"interruptions", r.interruptions},
          {"interruptions_by_cause", by},
          {"goodput", r.goodput},
          {"effective_mfu", r.effective_mfu},
          {"lost_gpu_hours", r.lost_gpu_hours},
          {"lost_gpu_hours_by_cause", lost},
          {"overhead_gpu_hours", overhead},
          {"checkpoint_overhead_fraction", r.checkpoint_overhead_fraction},
          {"cost_usd", r.cost_usd},
          {"iteration_s", r.iteration_s},
          {"data_iteration_s", r.data_iteration_s},
          {"mtbf_s", finite_or_null(r.mtbf_s)},
          {"checkpoint",
           {{"write_s", r.checkpoint_write_s},
            {"read_s", r.checkpoint_read_s},
            {"interval_s", finite_or_null(r.interval_s)},
            {"young_interval_s", finite_or_null(r.young_s)},
            {"daly_interval_s", finite_or_null(r.daly_s)}}},
          {"events", ev},
          {"wall_s", r.wall_s},
          {"seed", r.seed},
          {"failure_profile", r.failure_profile}};
}

json to_json(const SimReport& r) {
  // The estimate's keys, for the simulated iteration, and the analytic model's own figures beside them.
  json out = perf::to_json(r.simulated, r.config);
  out["analytic"] = {{"iteration_time_s", r.analytic.iteration_time_s},
                     {"time_breakdown_s", perf::to_json(r.analytic, r.config)["time_breakdown_s"]},
                     {"mfu", r.analytic.mfu}};
  out["sim"] = to_json(r.sim);
  if (r.run) out["run"] = to_json(*r.run);
  return out;
}

}  // namespace mc::sim
