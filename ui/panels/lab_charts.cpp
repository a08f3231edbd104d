// lab_charts.cpp - the training lab's drawings (lab_charts.h): loss curves, memory bars, the pipeline
// schedule, the message graph and the scaling sweep.
#include "ui/panels/lab_charts.h"

#include "core/format.h"
#include "ui/widgets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace mc::ui {

namespace {

ImU32 series_color(int i, float alpha = 1.0f) {
  static const ImVec4 c[] = {{0.35f, 0.7f, 1.0f, 1}, {1.0f, 0.6f, 0.2f, 1},   {0.5f, 0.9f, 0.4f, 1},
                             {0.95f, 0.4f, 0.6f, 1}, {0.75f, 0.55f, 1.0f, 1}, {0.9f, 0.85f, 0.3f, 1},
                             {0.4f, 0.9f, 0.85f, 1}, {0.8f, 0.8f, 0.8f, 1}};
  ImVec4 v = c[i % 8];
  v.w = alpha;
  return ImGui::ColorConvertFloat4ToU32(v);
}

ImU32 traffic_color(train::Traffic t) {
  switch (t) {
    case train::Traffic::dp:
      return IM_COL32(90, 170, 255, 220);
    case train::Traffic::tp:
      return IM_COL32(255, 150, 60, 220);
    case train::Traffic::pp:
      return IM_COL32(120, 220, 100, 220);
    case train::Traffic::tie:
      return IM_COL32(230, 100, 160, 220);
    case train::Traffic::control:
      return IM_COL32(170, 170, 170, 160);
  }
  return IM_COL32_WHITE;
}

struct Frame {
  ImVec2 p0, p1;
  ImDrawList* dl;
};

Frame begin_frame(const char* id, ImVec2 size) {
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  ImGui::InvisibleButton(id, size);
  Frame f{ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), ImGui::GetWindowDrawList()};
  f.dl->AddRectFilled(f.p0, f.p1, IM_COL32(24, 26, 32, 255), 4);
  f.dl->AddRect(f.p0, f.p1, IM_COL32(70, 74, 84, 255), 4);
  return f;
}

void dashed_hline(ImDrawList* dl, float x0, float x1, float y, ImU32 col) {
  for (float x = x0; x < x1; x += 10) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 5, x1), y), col, 1.5f);
}

}  // namespace

LossAxes loss_axes(const std::vector<LabCurve>& curves, int configured_steps, double floor, bool log_y) {
  LossAxes a;
  a.log_y = log_y;
  size_t longest = 0;
  double lo = floor > 0 ? floor * 0.9 : INFINITY, hi = -INFINITY;
  for (const auto& c : curves) {
    longest = std::max(longest, c.losses.size());
    for (double l : c.losses) lo = std::min(lo, l), hi = std::max(hi, l);
  }
  if (!(hi > lo) || (log_y && !(lo > 0))) lo = 0.1, hi = 6;
  a.lo = lo, a.hi = hi;
  const size_t want = std::max<size_t>(longest, 10);
  size_t nice = 1;
  for (size_t decade = 1; nice < want; decade *= 10)
    for (size_t m : {1, 2, 5})
      if (nice < want) nice = m * decade;
  a.steps = std::max(longest, std::min(nice, size_t(std::max(configured_steps, 1))));
  a.steps = std::max<size_t>(a.steps, 2);
  return a;
}

void lab_loss_chart(const char* id, const std::vector<LabCurve>& curves, int steps, double floor, bool log_y,
                    ImVec2 size) {
  Frame f = begin_frame(id, size);
  const LossAxes ax = loss_axes(curves, steps, floor, log_y);
  const double lo = ax.lo, hi = ax.hi;
  const size_t n = ax.steps;
  const ImU32 ink = IM_COL32(160, 160, 170, 255);
  const float L = f.p0.x + 44, R = f.p1.x - 8, T = f.p0.y + 8, B = f.p1.y - 18;
  auto ty = [&](double v) {
    const double a = log_y ? std::log(v) : v, l0 = log_y ? std::log(lo) : lo, l1 = log_y ? std::log(hi) : hi;
    return float(B - (a - l0) / (l1 - l0) * (B - T));
  };
  auto tx = [&](double i) { return float(L + i / double(std::max<size_t>(n - 1, 1)) * (R - L)); };
  char buf[48];
  for (int k = 0; k <= 4; ++k) {
    const double v = log_y ? lo * std::pow(hi / lo, k / 4.0) : lo + (hi - lo) * k / 4.0;
    std::snprintf(buf, sizeof buf, "%.2f", v);
    f.dl->AddText(ImVec2(f.p0.x + 4, ty(v) - 7), ink, buf);
    f.dl->AddLine(ImVec2(L, ty(v)), ImVec2(R, ty(v)), IM_COL32(50, 54, 62, 255));
  }
  // The axes' titles: what is plotted, in which unit.
  f.dl->AddText(ImVec2(L + 4, T), ink, "loss (nats/byte)");
  std::snprintf(buf, sizeof buf, "training step (1 .. %zu)", n);
  f.dl->AddText(ImVec2(R - ImGui::CalcTextSize(buf).x, B + 2), ink, buf);
  if (floor > 0) {
    dashed_hline(f.dl, L, R, ty(floor), IM_COL32(220, 220, 120, 200));
    f.dl->AddText(ImVec2(L + 4, ty(floor) - 15), IM_COL32(220, 220, 120, 220), "corpus entropy");
  }
  for (size_t ci = 0; ci < curves.size(); ++ci) {
    const auto& c = curves[ci];
    const bool now = ci + 1 == curves.size();
    std::vector<ImVec2> pts;
    for (size_t i = 0; i < c.losses.size(); ++i) pts.push_back(ImVec2(tx(double(i)), ty(c.losses[i])));
    if (pts.size() >= 2)
      f.dl->AddPolyline(pts.data(), int(pts.size()), series_color(int(ci), now ? 1.0f : 0.7f), 0, now ? 2.0f : 1.3f);
    f.dl->AddText(ImVec2(R - 260, T + 16 + 14 * float(ci)), series_color(int(ci)), c.label.c_str());
  }
  ChartData d{.title = "Training loss", .x_name = "step"};
  for (size_t i = 0; i < n; ++i) d.x.push_back(double(i + 1));
  for (const auto& c : curves) d.series.push_back({c.label, "nats/byte", c.losses});
  describe_chart(d, f.p0, f.p1);
}

void lab_memory_bars(const std::vector<train::WorkerMemory>& mem, ImVec2 size) {
  Frame f = begin_frame("##lab_mem", size);
  double mx = 1;
  for (const auto& m : mem) mx = std::max(mx, m.persistent_bytes() + m.transient_peak_bytes + m.activations_peak_bytes);
  const size_t rows = std::min<size_t>(mem.size(), 8);
  const float L = f.p0.x + 60, R = f.p1.x - 90, rowh = (f.p1.y - f.p0.y - 20) / float(std::max<size_t>(rows, 1));
  const char* names[5] = {"weights", "grads", "Adam m, v", "whole layers", "activations"};
  for (size_t i = 0; i < rows; ++i) {
    const auto& m = mem[i];
    const double parts[5] = {m.params_bytes, m.grads_bytes, m.optimizer_bytes, m.transient_peak_bytes,
                             m.activations_peak_bytes};
    const float y0 = f.p0.y + 4 + rowh * float(i), y1 = y0 + rowh - 4;
    char buf[48];
    std::snprintf(buf, sizeof buf, "w%zu", i);
    f.dl->AddText(ImVec2(f.p0.x + 6, y0), IM_COL32(190, 190, 200, 255), buf);
    float x = L;
    for (int k = 0; k < 5; ++k) {
      const float wpx = float(parts[k] / mx) * (R - L);
      f.dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + wpx, y1), series_color(k, 0.85f));
      x += wpx;
    }
    f.dl->AddText(
        ImVec2(x + 6, y0), IM_COL32(190, 190, 200, 255),
        format_quantity(m.persistent_bytes() + m.transient_peak_bytes + m.activations_peak_bytes, "bytes").c_str());
  }
  // The legend on the bottom line, with short names when the full ones do not fit the panel's width.
  static const char* const short_names[5] = {"wts", "grads", "Adam", "whole", "act."};
  char more[48] = "";
  if (mem.size() > rows) std::snprintf(more, sizeof more, "(+%zu more workers)", mem.size() - rows);
  auto width = [](const char* const* n) {
    float w = 0;
    for (int k = 0; k < 5; ++k) w += 18 + ImGui::CalcTextSize(n[k]).x;
    return w;
  };
  float x = f.p0.x + 6;
  const float room = f.p1.x - 6 - x - (more[0] ? ImGui::CalcTextSize(more).x + 8 : 0.0f);
  const char* const* shown = width(names) <= room ? names : short_names;
  for (int k = 0; k < 5; ++k) {
    f.dl->AddRectFilled(ImVec2(x, f.p1.y - 13), ImVec2(x + 10, f.p1.y - 4), series_color(k));
    f.dl->AddText(ImVec2(x + 13, f.p1.y - 17), IM_COL32(170, 170, 180, 255), shown[k]);
    x += 18 + ImGui::CalcTextSize(shown[k]).x;
  }
  if (more[0]) f.dl->AddText(ImVec2(x + 8, f.p1.y - 17), IM_COL32(150, 150, 160, 255), more);
  // Its data: each worker's parts, in kB (the lab's model is small).
  ChartData d{.title = "Memory per worker", .x_name = "worker"};
  for (int k = 0; k < 5; ++k) d.series.push_back({names[k], "kB", {}});
  for (size_t i = 0; i < mem.size(); ++i) {
    const auto& m = mem[i];
    char name[24];
    std::snprintf(name, sizeof name, "w%zu", i);  // not "w" + to_string: GCC 12 warns falsely (PR 105329)
    d.x_labels.push_back(name);
    const double parts[5] = {m.params_bytes, m.grads_bytes, m.optimizer_bytes, m.transient_peak_bytes,
                             m.activations_peak_bytes};
    for (int k = 0; k < 5; ++k) d.series[size_t(k)].y.push_back(parts[k] / 1e3);
  }
  describe_chart(d, f.p0, f.p1);
}

void lab_schedule(const std::vector<train::PipelineOp>& ops, int stages, ImVec2 size) {
  Frame f = begin_frame("##lab_sched", size);
  int ticks = 1;
  for (const auto& o : ops) ticks = std::max(ticks, o.tick + 1);
  const float L = f.p0.x + 40, R = f.p1.x - 4, rowh = (f.p1.y - f.p0.y - 8) / float(std::max(stages, 1));
  const float cw = (R - L) / float(ticks);
  for (int s = 0; s < stages; ++s) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "st %d", s);
    f.dl->AddText(ImVec2(f.p0.x + 4, f.p0.y + 4 + rowh * float(s)), IM_COL32(180, 180, 190, 255), buf);
  }
  for (const auto& o : ops) {
    const float x0 = L + cw * float(o.tick), y0 = f.p0.y + 4 + rowh * float(o.stage);
    f.dl->AddRectFilled(ImVec2(x0 + 1, y0), ImVec2(x0 + cw - 1, y0 + rowh - 3),
                        o.backward ? IM_COL32(90, 190, 110, 255) : IM_COL32(80, 140, 230, 255), 2);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%c%d", o.backward ? 'B' : 'F', o.micro_batch);
    if (cw > 18) f.dl->AddText(ImVec2(x0 + 3, y0 + 2), IM_COL32_WHITE, buf);
  }
  // Its data: each stage's forward and backward passes and idle ticks of the step (the idle ones: the bubble).
  ChartData d{.title = "Pipeline schedule of the step, " + std::to_string(ticks) + " ticks", .x_name = "stage"};
  d.series = {{"forward", "ticks", std::vector<double>(size_t(std::max(stages, 0)))},
              {"backward", "ticks", std::vector<double>(size_t(std::max(stages, 0)))},
              {"idle", "ticks", std::vector<double>(size_t(std::max(stages, 0)), double(ticks))}};
  for (const auto& o : ops)
    if (o.stage >= 0 && o.stage < stages)
      d.series[o.backward ? 1 : 0].y[size_t(o.stage)] += 1, d.series[2].y[size_t(o.stage)] -= 1;
  for (int s = 0; s < stages; ++s) {
    char name[16];
    std::snprintf(name, sizeof name, "st %d", s);
    d.x_labels.push_back(name);
  }
  describe_chart(d, f.p0, f.p1);
}

void lab_message_graph(const train::TrainerReport& t, ImVec2 size, double replay) {
  Frame f = begin_frame("##lab_msgs", size);
  const auto& pc = t.config.parallel;
  const int n = pc.workers();
  const ImVec2 c((f.p0.x + f.p1.x) / 2, (f.p0.y + f.p1.y) / 2 + 6);
  const float rad = std::min(f.p1.x - f.p0.x, f.p1.y - f.p0.y) * 0.36f;
  std::vector<ImVec2> at(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const float a = -1.5707963f + 6.2831853f * float(i) / float(std::max(n, 1));
    at[size_t(i)] = ImVec2(c.x + rad * std::cos(a), c.y + rad * std::sin(a));
  }
  // The engine's per-link counters of this step (Comm::step_links), one arrow per link and traffic class.
  struct Arrow {
    int src, dst, tr;
    double bytes, messages;
  };
  std::vector<Arrow> agg;
  double mx = 1;
  const size_t done = replay < 0 ? 0 : std::min(t.messages.size(), size_t(replay));
  if (replay < 0) {
    for (const train::LinkTraffic& l : t.links) {
      agg.push_back({l.src, l.dst, int(l.traffic), l.bytes, l.messages});
      mx = std::max(mx, l.bytes);
    }
  } else {
    // The same arrows, counted over the messages replayed so far (the widths keep the whole step's scale).
    for (const train::LinkTraffic& l : t.links) mx = std::max(mx, l.bytes);
    std::map<std::tuple<int, int, int>, size_t> index;
    for (size_t i = 0; i < done; ++i) {
      const train::MessageRecord& m = t.messages[i];
      auto [it, fresh] = index.try_emplace({m.src, m.dst, int(m.traffic)}, agg.size());
      if (fresh) agg.push_back({m.src, m.dst, int(m.traffic), 0, 0});
      agg[it->second].bytes += m.bytes;
      agg[it->second].messages += 1;
    }
  }
  for (const Arrow& ar : agg) {
    const int src = ar.src, dst = ar.dst, tr = ar.tr;
    const double bytes = ar.bytes;
    const ImVec2 a = at[size_t(src)], b = at[size_t(dst)];
    // Offset each direction sideways so a->b and b->a do not overlap.
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::max(1.0f, std::sqrt(dx * dx + dy * dy));
    const ImVec2 off(-dy / len * 4, dx / len * 4);
    const float wpx = 1.0f + 5.0f * float(std::sqrt(bytes / mx));
    const ImVec2 a2(a.x + off.x + dx / len * 14, a.y + off.y + dy / len * 14),
        b2(b.x + off.x - dx / len * 16, b.y + off.y - dy / len * 16);
    f.dl->AddLine(a2, b2, traffic_color(train::Traffic(tr)), wpx);
    f.dl->AddTriangleFilled(b2, ImVec2(b2.x - dx / len * 8 + off.x, b2.y - dy / len * 8 + off.y),
                            ImVec2(b2.x - dx / len * 8 - off.x, b2.y - dy / len * 8 - off.y),
                            traffic_color(train::Traffic(tr)));
  }
  if (replay >= 0 && done < t.messages.size()) {  // the message in flight
    const train::MessageRecord& m = t.messages[done];
    if (m.src >= 0 && m.src < n && m.dst >= 0 && m.dst < n) {
      const float u = float(replay - double(done));
      const ImVec2 a = at[size_t(m.src)], b = at[size_t(m.dst)];
      f.dl->AddCircleFilled(ImVec2(a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u), 7, traffic_color(m.traffic));
    }
  }
  const std::vector<double> so_far = replay >= 0 ? train::bytes_sent_in_first(t, done) : std::vector<double>{};
  for (int i = 0; i < n; ++i) {
    if (size_t(i) < so_far.size()) {
      const std::string sent = format_quantity(so_far[size_t(i)], "bytes");
      f.dl->AddText(ImVec2(at[size_t(i)].x - ImGui::CalcTextSize(sent.c_str()).x / 2, at[size_t(i)].y + 14),
                    IM_COL32(200, 200, 210, 255), sent.c_str());
    }
    f.dl->AddCircleFilled(at[size_t(i)], 12, IM_COL32(50, 56, 70, 255));
    f.dl->AddCircle(at[size_t(i)], 12, IM_COL32(180, 190, 210, 255));
    char buf[16];
    std::snprintf(buf, sizeof buf, "%d", i);
    f.dl->AddText(ImVec2(at[size_t(i)].x - 4, at[size_t(i)].y - 7), IM_COL32_WHITE, buf);
  }
  // The legend spreads over the width it has (tighter than 70 px a class when the panel is narrow).
  float x = f.p0.x + 6, label_w = 0;
  for (int k = 0; k < train::kTrafficClasses; ++k)
    label_w += 18 + ImGui::CalcTextSize(train::to_string(train::Traffic(k))).x;
  const float gap = std::max(0.0f, std::min(70.0f * train::kTrafficClasses - label_w, f.p1.x - 6 - x - label_w)) /
                    float(train::kTrafficClasses);
  for (int k = 0; k < train::kTrafficClasses; ++k) {
    const char* name = train::to_string(train::Traffic(k));
    f.dl->AddRectFilled(ImVec2(x, f.p0.y + 6), ImVec2(x + 10, f.p0.y + 16), traffic_color(train::Traffic(k)));
    f.dl->AddText(ImVec2(x + 13, f.p0.y + 3), IM_COL32(190, 190, 200, 255), name);
    x += 18 + ImGui::CalcTextSize(name).x + gap;
  }
  ChartData d{.title = "Messages between workers", .x_name = "from, to, what", .levels = true};
  d.series = {{"bytes sent", "", {}}, {"messages", "", {}}};
  for (const Arrow& ar : agg) {
    d.x_labels.push_back("worker " + std::to_string(ar.src) + " to " + std::to_string(ar.dst) + ", " +
                         train::to_string(train::Traffic(ar.tr)));
    d.series[0].y.push_back(ar.bytes), d.series[1].y.push_back(ar.messages);
  }
  describe_chart(d, f.p0, f.p1);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted("Arrow width: bytes in the last step (square root scale)");
    int shown = 0;
    for (const Arrow& ar : agg) {
      if (++shown > 24) break;
      ImGui::Text("%d -> %d  %-7s %s in %.0f message%s", ar.src, ar.dst, train::to_string(train::Traffic(ar.tr)),
                  format_quantity(ar.bytes, "bytes").c_str(), ar.messages, ar.messages == 1 ? "" : "s");
    }
    ImGui::EndTooltip();
  }
}

void lab_scaling_chart(const train::ScalingResult& r, ImVec2 size) {
  Frame f = begin_frame("##lab_scaling", size);
  std::vector<std::pair<double, double>> pts;
  for (const auto& p : r.points) pts.push_back({p.compute_flops, p.loss});
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  auto extend = [&](double x, double y) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  };
  for (auto [x, y] : pts) extend(x, y);
  if (r.fitted) extend(r.target.compute_flops, r.predicted_loss);
  if (r.target_trained) extend(r.target.compute_flops, r.target.loss);
  if (r.entropy_floor > 0 && y0 < INFINITY) y0 = std::min(y0, r.entropy_floor);
  if (!(x1 > x0) || !(y1 > y0)) {
    f.dl->AddText(ImVec2(f.p0.x + 10, f.p0.y + 10), IM_COL32(170, 170, 180, 255), "the sweep's points appear here");
    return;
  }
  x0 /= 1.5, x1 *= 1.5, y0 *= 0.85, y1 *= 1.1;
  // Titled axes (the chart had none): the loss's title above the plot with the legend, the compute's below
  // its tick labels; the y labels end left of the plot and the x labels start right of them, so no two overlap.
  const float lh = ImGui::GetTextLineHeight();
  const ImU32 axis = IM_COL32(160, 160, 170, 255);
  const float label_w = ImGui::CalcTextSize("0.00").x + 8;
  const float L = f.p0.x + label_w + 4, R = f.p1.x - 10, T = f.p0.y + lh + 8, B = f.p1.y - 2 * lh - 8;
  auto tx = [&](double x) { return float(L + (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0)) * (R - L)); };
  auto ty = [&](double y) { return float(B - (std::log(y) - std::log(y0)) / (std::log(y1) - std::log(y0)) * (B - T)); };
  f.dl->AddText(ImVec2(f.p0.x + 4, f.p0.y + 3), axis, "loss (nats per byte, log scale)");
  const char* x_title = "training compute (FLOP, log scale)";
  f.dl->AddText(ImVec2((L + R - ImGui::CalcTextSize(x_title).x) / 2, f.p1.y - lh - 3), axis, x_title);
  {  // the legend, right of the y title where it fits
    struct Key {
      ImU32 col;
      const char* name;
    };
    const Key keys[] = {{IM_COL32(100, 180, 255, 255), "small runs"},
                        {IM_COL32(255, 160, 70, 255), "fit, prediction"},
                        {IM_COL32(120, 230, 120, 255), "trained"}};
    float w = 0;
    for (const Key& k : keys) w += 14 + ImGui::CalcTextSize(k.name).x + 12;
    float kx = f.p1.x - 8 - w;
    if (kx > f.p0.x + 8 + ImGui::CalcTextSize("loss (nats per byte, log scale)").x)
      for (const Key& k : keys) {
        f.dl->AddCircleFilled(ImVec2(kx + 5, f.p0.y + 3 + lh / 2), 4, k.col);
        f.dl->AddText(ImVec2(kx + 14, f.p0.y + 3), k.col, k.name);
        kx += 14 + ImGui::CalcTextSize(k.name).x + 12;
      }
  }
  char buf[48];
  float last_x_end = -1e9f;
  for (int k = 0; k <= 3; ++k) {
    const double y = y0 * std::pow(y1 / y0, k / 3.0);
    std::snprintf(buf, sizeof buf, "%.2f", y);
    f.dl->AddText(ImVec2(L - 6 - ImGui::CalcTextSize(buf).x, ty(y) - lh / 2), axis, buf);
    f.dl->AddLine(ImVec2(L - 3, ty(y)), ImVec2(L, ty(y)), axis);
    const double x = x0 * std::pow(x1 / x0, k / 3.0);
    // Centred on its tick, kept inside the plot's width and clear of the label before it.
    const std::string label = format_quantity(x, "FLOP");
    const float lw = ImGui::CalcTextSize(label.c_str()).x;
    const float lx = std::clamp(tx(x) - lw / 2, L, f.p1.x - lw - 2);
    f.dl->AddLine(ImVec2(tx(x), B), ImVec2(tx(x), B + 3), axis);
    if (lx < last_x_end + 8) continue;
    f.dl->AddText(ImVec2(lx, B + 3), axis, label.c_str());
    last_x_end = lx + lw;
  }
  f.dl->AddLine(ImVec2(L, T), ImVec2(L, B), IM_COL32(90, 94, 104, 255));
  f.dl->AddLine(ImVec2(L, B), ImVec2(R, B), IM_COL32(90, 94, 104, 255));
  if (r.entropy_floor > 0) dashed_hline(f.dl, L, R, ty(r.entropy_floor), IM_COL32(220, 220, 120, 200));
  if (r.fitted) {
    std::vector<ImVec2> line;
    for (int i = 0; i <= 60; ++i) {
      const double x = x0 * std::pow(x1 / x0, i / 60.0), y = r.fit_compute(x);
      if (y > y0 && y < y1) line.push_back(ImVec2(tx(x), ty(y)));
    }
    if (line.size() >= 2) f.dl->AddPolyline(line.data(), int(line.size()), IM_COL32(255, 160, 70, 255), 0, 2.0f);
    f.dl->AddCircle(ImVec2(tx(r.target.compute_flops), ty(r.predicted_loss)), 7, IM_COL32(255, 160, 70, 255), 0, 2.0f);
    f.dl->AddText(ImVec2(tx(r.target.compute_flops) - 70, ty(r.predicted_loss) - 22), IM_COL32(255, 160, 70, 255),
                  "prediction");
  }
  for (auto [x, y] : pts) f.dl->AddCircleFilled(ImVec2(tx(x), ty(y)), 5, IM_COL32(100, 180, 255, 255));
  if (r.target_trained) {
    f.dl->AddCircleFilled(ImVec2(tx(r.target.compute_flops), ty(r.target.loss)), 5, IM_COL32(120, 230, 120, 255));
    f.dl->AddText(ImVec2(tx(r.target.compute_flops) - 50, ty(r.target.loss) + 8), IM_COL32(120, 230, 120, 255),
                  "trained");
  }
  // Its data: each run's compute and held-out loss, the fit's value at each, and the larger run last.
  ChartData d{.title = "Scaling sweep", .x_name = "training compute", .x_unit = "FLOP"};
  ChartSeries measured{"held-out loss", "nats/byte", {}}, fit{"fit L(C)", "nats/byte", {}};
  for (const auto& p : r.points) {
    d.x.push_back(p.compute_flops);
    measured.y.push_back(p.loss);
    fit.y.push_back(r.fitted ? r.fit_compute(p.compute_flops) : NAN);
  }
  if (r.fitted || r.target_trained) {
    d.x.push_back(r.target.compute_flops);
    measured.y.push_back(r.target_trained ? r.target.loss : NAN);
    fit.y.push_back(r.fitted ? r.predicted_loss : NAN);
  }
  d.series.push_back(std::move(measured));
  if (r.fitted) d.series.push_back(std::move(fit));
  describe_chart(d, f.p0, f.p1);
}

}  // namespace mc::ui
