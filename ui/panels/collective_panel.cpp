// collective_panel.cpp - "Collectives in motion": one collective (ring or tree all-reduce, reduce-scatter,
// all-gather, a pipeline send) on a group of 2-16 GPUs of the Run chapter's cluster, every chunk moving
// along the links it crosses at the times the flow simulator gives (sim/collective_animation.h), each link
// coloured by its load; beside or below it each GPU's buffer piece by piece, then the figures a narration can
// quote and the 2(p-1)/p rule with these numbers. Play/pause (Space), step one event (Right/Left), scrub, speed.
//
// Sections: settings and the cached animation; the picture; the controls and figures; the panel.
#include "core/format.h"
#include "core/json_doc.h"
#include "sim/collective_animation.h"
#include "ui/animation_panel.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace mc::ui {
namespace {

// ---- settings and the cached animation --------------------------------------------------------------

constexpr const char* kKinds[] = {"all-reduce", "reduce-scatter", "all-gather", "pipeline send"};
constexpr sim::CollectiveKind kKindValues[] = {sim::CollectiveKind::all_reduce, sim::CollectiveKind::reduce_scatter,
                                               sim::CollectiveKind::all_gather, sim::CollectiveKind::send};
constexpr const char* kAlgorithms[] = {"ring", "tree", "hierarchical"};
constexpr sim::Algorithm kAlgorithmValues[] = {sim::Algorithm::ring, sim::Algorithm::tree,
                                               sim::Algorithm::hierarchical};

// The simulate config whose cluster is drawn: a scenario's, else the Run chapter's (its panel holds the shipped
// default until it is changed).
const sim::SimRequest& cluster_config(const ExplorerState& s) {
  return s.collective.machine ? *s.collective.machine : s.sim.config;
}

void refresh(ExplorerState& s) {
  CollectiveView& v = s.collective;
  const sim::SimRequest& cfg = cluster_config(s);
  const sim::CollectiveSettings& set = v.settings;
  v.refresh({set, cfg.estimate.cluster}, [&] {
    const nlohmann::json machine = sim::to_json(cfg);
    return sim::CollectiveAnimationKind::make(*s.catalog, set, &machine);
  });
}

// ---- the picture ------------------------------------------------------------------------------------

ImU32 load_colour(double u) {  // idle grey -> amber -> red as a link fills
  u = std::clamp(u, 0.0, 1.0);
  if (u <= 0) return IM_COL32(110, 110, 120, 160);
  const float r = 230, g = float(200 - 150 * u), b = float(60 - 40 * u);
  return IM_COL32(int(r), int(g), int(b), 255);
}

ImU32 chunk_colour(int chunk, int chunks) {
  const float h = chunks > 0 ? float(chunk) / float(chunks) : 0;
  ImVec4 c;
  ImGui::ColorConvertHSVtoRGB(h, 0.65f, 0.95f, c.x, c.y, c.z);
  return IM_COL32(int(c.x * 255), int(c.y * 255), int(c.z * 255), 255);
}

struct Layout {
  std::map<int, ImVec2> gpu;   // GPU id -> centre
  std::map<int, ImVec2> hub;   // GPU id -> its NVLink port on the server's switch bar
  std::map<int, ImVec2> nic;   // node -> its NIC, top of the server box (stacked: its top right corner)
  std::map<int, ImVec2> leaf;  // leaf -> switch centre
  ImVec2 spine;
  float box = 30;
  float leaf_half_w = 40;  // half a switch's width: narrower where switches sit closer than 80 px
  bool stacked = false;
};

// Servers side by side, or, where that leaves a GPU narrower than about two digits (a 320 px page: 16 px each
// for two servers), one server per row with the switches in a column at the right, so each GPU keeps a
// readable box and number.
bool stack_servers(const sim::CollectiveAnimation& a, float width) {
  const sim::Topology& t = a.topology;
  int servers = 0, last = -1;
  for (int g : a.ranks)
    if (t.node_of(g) != last) last = t.node_of(g), ++servers;
  return servers > 1 && width / float(a.ranks.size()) < ImGui::GetFontSize() * 1.8f;
}

// The picture's height when its servers are stacked: a row each, as tall as a GPU's box, its number, the switch
// bar and the server's name need.
float stacked_height(const sim::CollectiveAnimation& a) {
  const sim::Topology& t = a.topology;
  int servers = 0, last = -1;
  for (int g : a.ranks)
    if (t.node_of(g) != last) last = t.node_of(g), ++servers;
  return ImGui::GetFontSize() * (7 * float(servers) + 1);
}

Layout layout(const sim::CollectiveAnimation& a, ImVec2 p0, ImVec2 size, bool stacked) {
  Layout L;
  L.stacked = stacked;
  const sim::Topology& t = a.topology;
  std::vector<int> nodes;
  for (int g : a.ranks)
    if (nodes.empty() || nodes.back() != t.node_of(g)) nodes.push_back(t.node_of(g));
  std::vector<int> leaves;
  for (int n : nodes)
    if (std::find(leaves.begin(), leaves.end(), t.leaf_of_node(n)) == leaves.end()) leaves.push_back(t.leaf_of_node(n));
  const int per = t.spec().gpus_per_node;
  const float fs = ImGui::GetFontSize();
  // Stacked: the switches' column on the right, the servers' rows left of it.
  const float column = stacked ? std::min(fs * 5, size.x * 0.3f) : 0;
  const float node_w = stacked ? size.x - column - fs : size.x / float(nodes.size());
  const float row_h = stacked ? size.y / float(nodes.size()) : size.y;
  L.box = std::clamp(std::min(node_w / float(std::min(per, 16)) - 6, row_h * 0.16f), 10.0f, 44.0f);
  // A server's outline reaches 0.7 box beyond its outer GPUs' centres, which sit half a GPU spacing inside
  // its share of the width: kept within that share, so two servers' outlines never overlap (they did at
  // 1440x900, where the spacing, not the height, set the box).
  // Stacked, a server has its row to itself: only its own GPUs must not touch.
  L.box = stacked ? std::max(6.0f, std::min(L.box, node_w / float(std::min(per, 16)) - 6))
                  : std::max(6.0f, std::min(L.box, (node_w / float(2 * std::min(per, 16)) - 4) / 0.7f));
  for (size_t n = 0; n < nodes.size(); ++n) {
    const float x0 = p0.x + (stacked ? 0 : node_w * float(n)), y0 = p0.y + (stacked ? row_h * float(n) : 0);
    // Side by side the NIC sits high, below the switches; stacked, at the top of the row.
    const float gpu_y = y0 + row_h * (stacked ? 0.62f : 0.78f), hub_y = y0 + row_h * (stacked ? 0.36f : 0.62f),
                nic_y = y0 + row_h * (stacked ? 0.14f : 0.45f);
    std::vector<int> here;
    for (int g : a.ranks)
      if (t.node_of(g) == nodes[n]) here.push_back(g);
    for (size_t i = 0; i < here.size(); ++i) {
      const float x = x0 + node_w * (float(i) + 0.5f) / float(here.size());
      L.gpu[here[i]] = ImVec2(x, gpu_y);
      L.hub[here[i]] = ImVec2(x, hub_y);
    }
    // Stacked, the NIC is at the outline's right end, nearest the switches.
    const float right = here.empty() ? x0 + node_w : L.gpu[here.back()].x + L.box * 0.7f;
    L.nic[nodes[n]] = ImVec2(stacked ? right : x0 + node_w * 0.5f, nic_y);
  }
  if (stacked) {
    // Each switch level with the servers under it; the spine, where there is one, at the top of the column.
    const float x = p0.x + size.x - column * 0.5f;
    for (int leaf : leaves) {
      float y = 0;
      int k = 0;
      for (int n : nodes)
        if (t.leaf_of_node(n) == leaf) y += L.nic[n].y, ++k;
      L.leaf[leaf] = ImVec2(x, y / float(std::max(1, k)) + fs * 1.5f);
    }
    L.leaf_half_w = std::min(40.0f, column * 0.5f - 2);
    L.spine = ImVec2(x, p0.y + fs * 0.5f);
    return L;
  }
  for (size_t i = 0; i < leaves.size(); ++i)
    L.leaf[leaves[i]] = ImVec2(p0.x + size.x * (float(i) + 0.5f) / float(leaves.size()), p0.y + size.y * 0.22f);
  L.leaf_half_w = std::min(40.0f, size.x / float(leaves.size()) * 0.5f - 4);
  L.spine = ImVec2(p0.x + size.x * 0.5f, p0.y + size.y * 0.05f);
  return L;
}

// Words drawn centred on `x` only if they fit in `room` px: `full`, else `brief`, else nothing.
const char* fitting(const std::string& full, const std::string& brief, float room) {
  if (ImGui::CalcTextSize(full.c_str()).x <= room) return full.c_str();
  if (ImGui::CalcTextSize(brief.c_str()).x <= room) return brief.c_str();
  return nullptr;
}

// The waypoints a chunk passes from src to dst: its GPU, the switch bar, then (between servers) the NICs,
// leaf switches and (between leaves) a spine.
std::vector<ImVec2> route(const sim::CollectiveAnimation& a, const Layout& L, int src, int dst) {
  const sim::Topology& t = a.topology;
  std::vector<ImVec2> r{L.gpu.at(src), L.hub.at(src)};
  const int ns = t.node_of(src), nd = t.node_of(dst);
  if (ns != nd) {
    r.push_back(L.nic.at(ns));
    r.push_back(L.leaf.at(t.leaf_of_node(ns)));
    if (t.leaf_of_node(ns) != t.leaf_of_node(nd)) {
      r.push_back(L.spine);
      r.push_back(L.leaf.at(t.leaf_of_node(nd)));
    }
    r.push_back(L.nic.at(nd));
  }
  r.push_back(L.hub.at(dst));
  r.push_back(L.gpu.at(dst));
  return r;
}

ImVec2 along(const std::vector<ImVec2>& r, double f) {
  double total = 0;
  for (size_t i = 1; i < r.size(); ++i) total += std::hypot(r[i].x - r[i - 1].x, r[i].y - r[i - 1].y);
  double want = std::clamp(f, 0.0, 1.0) * total;
  for (size_t i = 1; i < r.size(); ++i) {
    const double d = std::hypot(r[i].x - r[i - 1].x, r[i].y - r[i - 1].y);
    if (want <= d && d > 0) {
      const float k = float(want / d);
      return ImVec2(r[i - 1].x + (r[i].x - r[i - 1].x) * k, r[i - 1].y + (r[i].y - r[i - 1].y) * k);
    }
    want -= d;
  }
  return r.back();
}

// Which ranks' data each rank's chunks hold after the moves that have ended by t (ring schedules only:
// a tree's chunk is a whole half of the buffer, so there is nothing to fill in).
std::vector<std::vector<int>> contributions(const sim::CollectiveAnimation& a, double t) {
  const int p = int(a.ranks.size());
  const int first = a.ranks.front();
  const bool gather = a.spec.kind == sim::CollectiveKind::all_gather;
  std::vector<std::vector<std::vector<char>>> have(
      size_t(p), std::vector<std::vector<char>>(size_t(p), std::vector<char>(size_t(p), 0)));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < p; ++c) have[size_t(r)][size_t(c)][size_t(r)] = !gather || c == r;
  for (int step = 0; step < a.steps; ++step) {
    auto next = have;
    bool any = false;
    for (const sim::ChunkMove& m : a.moves) {
      if (m.step != step || m.t_end_s > t) continue;
      any = true;
      const auto& from = have[size_t(m.src - first)][size_t(m.chunk)];
      auto& to = next[size_t(m.dst - first)][size_t(m.chunk)];
      for (int r = 0; r < p; ++r) to[size_t(r)] = m.reduces ? char(to[size_t(r)] | from[size_t(r)]) : from[size_t(r)];
    }
    if (!any) break;
    have = std::move(next);
  }
  std::vector<std::vector<int>> out(size_t(p), std::vector<int>(size_t(p), 0));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < p; ++c)
      for (char x : have[size_t(r)][size_t(c)]) out[size_t(r)][size_t(c)] += x;
  return out;
}

// Ring schedules (reduce-scatter, all-gather, a ring all-reduce) fill each GPU's buffer piece by piece; a tree
// or a send moves whole halves, so there is nothing to fill in.
bool fills_pieces(const sim::CollectiveAnimation& a) {
  return a.spec.kind != sim::CollectiveKind::send &&
         !(a.spec.kind == sim::CollectiveKind::all_reduce && a.spec.algorithm != sim::Algorithm::ring);
}

void draw_picture(ExplorerState& s, const sim::CollectiveAnimation& a, const std::vector<std::vector<int>>& filled,
                  ImVec2 size, bool stacked) {
  CollectiveView& v = s.collective;
  ImGui::InvisibleButton("##collective_picture", size);
  track(s, "collective.picture");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetItemRectMin();
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), ImGui::GetColorU32(ImGuiCol_FrameBg));
  const ImVec2 inner(p0.x + 16, p0.y + 18);
  const Layout L = layout(a, inner, ImVec2(size.x - 32, size.y - 36), stacked);
  const sim::CollectiveFrame f = sim::frame_at(a, v.t_s);
  const sim::Topology& t = a.topology;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float thick = std::max(2.0f, ImGui::GetFontSize() * 0.22f);

  // Links, coloured by their load now; up and down drawn side by side.
  for (size_t i = 0; i < a.links.size(); ++i) {
    const sim::AnimatedLink& l = a.links[i];
    const sim::Link& link = t.link(l.link);
    const ImU32 c = load_colour(f.link_utilisation[i]);
    ImVec2 from, to;
    float off = 0;
    switch (l.cls) {
      case sim::LinkClass::nvlink_up:
      case sim::LinkClass::nvlink_down:
        from = L.gpu.at(link.index);
        to = L.hub.at(link.index);
        off = l.cls == sim::LinkClass::nvlink_up ? -thick : thick;
        from.y -= L.box * 0.5f;
        break;
      case sim::LinkClass::nic_up:
      case sim::LinkClass::nic_down: {
        // NIC links are numbered per node (and per NIC on multi-NIC nodes): find the node they serve.
        int node = -1;
        for (const auto& [n, pos] : L.nic)
          for (int g : a.ranks)
            if (t.node_of(g) == n && (t.nic_up(g) == l.link || t.nic_down(g) == l.link)) node = n;
        if (node < 0) continue;
        from = L.nic.at(node);
        to = L.leaf.at(t.leaf_of_node(node));
        off = l.cls == sim::LinkClass::nic_up ? -thick : thick;
        break;
      }
      case sim::LinkClass::leaf_up:
      case sim::LinkClass::leaf_down:
        if (!L.leaf.count(link.index)) continue;
        from = L.leaf.at(link.index);
        to = L.spine;
        off = l.cls == sim::LinkClass::leaf_up ? -thick : thick;
        break;
      case sim::LinkClass::spine:
        continue;  // a crossbar: drawn as the spine box
    }
    // Up and down side by side: offset across the link (vertical side by side, a stacked server's NIC link
    // nearly horizontal).
    const float len = std::max(1.0f, std::hypot(to.x - from.x, to.y - from.y));
    const ImVec2 across(-(to.y - from.y) / len * off, (to.x - from.x) / len * off);
    dl->AddLine(ImVec2(from.x + across.x, from.y + across.y), ImVec2(to.x + across.x, to.y + across.y), c, thick);
  }
  // Servers, switch bars, NICs, switches, GPUs.
  std::map<int, std::pair<float, float>> span;  // node -> x extent of its GPUs
  std::map<int, int> first_gpu;                 // node -> its first GPU in the group
  for (const auto& [g, pos] : L.gpu) {
    auto& e = span.try_emplace(t.node_of(g), pos.x, pos.x).first->second;
    e.first = std::min(e.first, pos.x);
    e.second = std::max(e.second, pos.x);
    first_gpu.try_emplace(t.node_of(g), g);
  }
  for (const auto& [n, e] : span) {
    const int g = first_gpu.at(n);
    const float y = L.hub.at(g).y;
    const ImVec2 a0(e.first - L.box * 0.7f, L.nic.at(n).y - 6),
        a1(e.second + L.box * 0.7f, L.gpu.at(g).y + L.box * 0.5f + 18);
    dl->AddRect(a0, a1, dim, 6);
    dl->AddLine(ImVec2(e.first - L.box * 0.5f, y), ImVec2(e.second + L.box * 0.5f, y), dim, thick * 1.5f);
    const std::string name = "server " + std::to_string(n), number = std::to_string(n);
    if (const char* label = fitting(name, number, a1.x - a0.x - 16 - thick * 4))
      dl->AddText(ImVec2(a0.x + 8, a0.y + 4), dim, label);
    if (span.size() > 1) dl->AddCircleFilled(L.nic.at(n), thick * 2, dim);
  }
  for (const auto& [leaf, pos] : L.leaf) {
    if (span.size() < 2) break;  // one server: nothing leaves it
    const float hw = L.leaf_half_w;
    dl->AddRectFilled(ImVec2(pos.x - hw, pos.y - 9), ImVec2(pos.x + hw, pos.y + 9), dim, 3);
    const std::string name = "leaf " + std::to_string(leaf), number = std::to_string(leaf);
    if (const char* label = fitting(name, number, 2 * hw - 6))
      dl->AddText(ImVec2(pos.x - ImGui::CalcTextSize(label).x * 0.5f, pos.y - 8), IM_COL32(20, 20, 20, 255), label);
  }
  if (L.leaf.size() > 1)
    dl->AddRectFilled(ImVec2(L.spine.x - L.leaf_half_w, L.spine.y - 9),
                      ImVec2(L.spine.x + L.leaf_half_w, L.spine.y + 9), dim, 3);
  const bool rings = fills_pieces(a);
  const bool gather = a.spec.kind == sim::CollectiveKind::all_gather;
  const int p = int(a.ranks.size());
  float numbered_to = -FLT_MAX, numbered_y = 0;  // the right end of the last GPU number drawn, on its row
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    const int g = a.ranks[r];
    const ImVec2 c = L.gpu.at(g);
    const ImVec2 b0(c.x - L.box * 0.5f, c.y - L.box * 0.5f), b1(c.x + L.box * 0.5f, c.y + L.box * 0.5f);
    dl->AddRectFilled(b0, b1, IM_COL32(60, 70, 90, 255), 3);
    if (rings) {  // the rank's buffer as p cells, each as full as the ranks reduced into it (or there)
      const float cw = (L.box - 4) / float(p);
      for (int k = 0; k < p; ++k) {
        const int n = filled[r][size_t(k)];
        const float frac = gather ? (n > 0 ? 1.0f : 0.0f) : float(n) / float(p);
        const ImVec2 q0(b0.x + 2 + cw * float(k), b1.y - 2 - (L.box - 4) * frac),
            q1(b0.x + 2 + cw * float(k + 1) - 1, b1.y - 2);
        if (frac > 0) dl->AddRectFilled(q0, q1, chunk_colour(k, p));
      }
    }
    dl->AddRect(b0, b1, text, 3);
    // Its number, unless it would touch the one before (GPUs closer than two digits: every other one).
    const std::string id = std::to_string(g);
    const float w = ImGui::CalcTextSize(id.c_str()).x, x = c.x - w * 0.5f;
    if (c.y != numbered_y || x >= numbered_to + ImGui::GetFontSize() * 0.3f) {
      dl->AddText(ImVec2(x, b1.y + 2), text, id.c_str());
      numbered_to = x + w, numbered_y = c.y;
    }
  }
  // Chunks in flight.
  for (const sim::MoveInFlight& m : f.in_flight) {
    const sim::ChunkMove& mv = a.moves[size_t(m.move)];
    const ImVec2 at = along(route(a, L, mv.src, mv.dst), m.progress);
    const float r = std::max(4.0f, thick * 2.2f);
    dl->AddCircleFilled(at, r, chunk_colour(mv.chunk, rings ? p : 2));
    dl->AddCircle(at, r, IM_COL32(20, 20, 20, 255));
  }
  describe_chart(sim::link_load_chart(a, f), p0, ImVec2(p0.x + size.x, p0.y + size.y));
}

// Each GPU's buffer as a row of its p pieces, large enough to read across a room (the picture's GPU boxes are
// a few dozen pixels): a piece's bar is the share of the GPUs whose gradients it sums (reduce-scatter and
// all-reduce), or whether the piece has arrived (all-gather). Given to the accessibility tree as a figure.
float buffers_height(int p) { return ImGui::GetTextLineHeightWithSpacing() * 2 + ImGui::GetFontSize() * 1.2f * p; }

void draw_buffers(ExplorerState& s, const sim::CollectiveAnimation& a, const std::vector<std::vector<int>>& filled,
                  ImVec2 size) {
  const int p = int(a.ranks.size());
  const bool gather = a.spec.kind == sim::CollectiveKind::all_gather;
  const float fs = ImGui::GetFontSize();
  ImGui::BeginGroup();
  wrapped_text(false,
               gather ? "Each GPU's buffer in %d pieces, filled as they arrive"
                      : "Each GPU's buffer in %d pieces; a bar is how many GPUs a piece sums (full: %d)",
               p, p);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float label_w = ImGui::CalcTextSize("GPU 00").x + fs * 0.5f;
  const float row_h = fs * 1.2f, cell_w = std::max(3.0f, (size.x - label_w) / float(p));
  ImGui::Dummy(ImVec2(size.x, row_h * float(p)));
  track(s, "collective.buffers");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), frame = ImGui::GetColorU32(ImGuiCol_FrameBg);
  ChartData d{.title = "Each GPU's buffer", .x_name = "GPU"};
  // Counts named by their series (no unit), so the summary reads "pieces complete is 0 at every GPU; fewest
  // GPUs in a piece is 1 at every GPU" (a complete piece sums every GPU's data).
  d.series = {{gather ? "pieces held" : "pieces complete", "", {}},
              {gather ? "" : "fewest GPUs in a piece", "", {}},
              {gather ? "" : "most GPUs in a piece", "", {}}};
  if (gather) d.series.resize(1);
  for (int r = 0; r < p; ++r) {
    const float y = p0.y + row_h * float(r);
    const std::string id = "GPU " + std::to_string(a.ranks[size_t(r)]);
    dl->AddText(ImVec2(p0.x + label_w - fs * 0.5f - ImGui::CalcTextSize(id.c_str()).x, y + (row_h - fs) * 0.5f), text,
                id.c_str());
    int complete = 0, least = p, most = 0;
    for (int k = 0; k < p; ++k) {
      const int n = filled[size_t(r)][size_t(k)];
      const float frac = gather ? (n > 0 ? 1.0f : 0.0f) : float(n) / float(p);
      complete += gather ? n > 0 : n == p;
      least = std::min(least, n), most = std::max(most, n);
      const ImVec2 c0(p0.x + label_w + cell_w * float(k), y + 1), c1(c0.x + cell_w - 2, y + row_h - 1);
      dl->AddRectFilled(c0, c1, frame);
      if (frac > 0) dl->AddRectFilled(ImVec2(c0.x, c1.y - (c1.y - c0.y) * frac), c1, chunk_colour(k, p));
    }
    d.x_labels.push_back(id);
    d.series[0].y.push_back(complete);
    if (!gather) d.series[1].y.push_back(least), d.series[2].y.push_back(most);
  }
  describe_chart(d, p0, ImVec2(p0.x + size.x, p0.y + row_h * float(p)));
  ImGui::EndGroup();
}

// ---- the controls and figures ------------------------------------------------------------------------

void draw_controls(ExplorerState& s) {
  using S = sim::CollectiveSettings;
  S& v = s.collective.settings;
  int kind = int(std::find(std::begin(kKindValues), std::end(kKindValues), v.kind) - std::begin(kKindValues));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (combo("collective", &kind, kKinds, IM_ARRAYSIZE(kKinds))) v.kind = kKindValues[kind];
  track(s, "collective.kind");
  if (v.kind == sim::CollectiveKind::all_reduce) {
    int alg = int(std::find(std::begin(kAlgorithmValues), std::end(kAlgorithmValues), v.algorithm) -
                  std::begin(kAlgorithmValues));
    same_line_if_fits_item("algorithm");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (combo("algorithm", &alg, kAlgorithms, IM_ARRAYSIZE(kAlgorithms))) v.algorithm = kAlgorithmValues[alg];
    track(s, "collective.algorithm");
  }
  same_line_if_fits_item("GPUs");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (v.kind == sim::CollectiveKind::send) {
    ImGui::TextDisabled("from GPU %d to GPU %d", v.first_gpu, v.first_gpu + v.gpus - 1);
  }
  slider_int_clamped("GPUs", v.gpus, S::kGpus.min, S::kGpus.max);
  track(s, "collective.gpus");
  same_line_if_fits_item("message");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  constexpr double kMiB = 1024.0 * 1024;
  float mib = float(v.message_bytes / kMiB);
  // In the unit its source uses too: Megatron-LM's bucket is 80 MB (decimal), which is 76 MiB.
  char fmt[48];
  if (v.message_bytes >= 1e6)
    std::snprintf(fmt, sizeof fmt, "%.0f MB (%%.0f MiB)", v.message_bytes / 1e6);
  else
    std::snprintf(fmt, sizeof fmt, "%.0f kB (%%.3f MiB)", v.message_bytes / 1e3);
  if (slider_float("message", mib, float(S::kMinMessageBytes / kMiB), float(S::kMaxMessageBytes / kMiB), fmt,
                   ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoRoundToFormat | ImGuiSliderFlags_AlwaysClamp))
    // Whole MiB, or whole KiB below one MiB: the sizes a person types and reads.
    v.message_bytes = mib >= 1 ? std::round(mib) * kMiB : std::max(1.0, std::round(mib * 1024.0)) * 1024.0;
  track(s, "collective.message");
}

void draw_transport(ExplorerState& s, const sim::CollectiveAnimation& a) {
  CollectiveView& v = s.collective;
  playback_controls(s, "collective", {v.t_s, v.playing, v.speed}, sim::event_times(a), a.total_s,
                    CollectiveView::kSecondsPerCall);
}

void draw_figures(ExplorerState& s, const sim::CollectiveAnimation& a) {
  const CollectiveView& v = s.collective;
  const sim::CollectiveFrame f = sim::frame_at(a, v.t_s);
  // Which phase runs, and in an all-reduce ring which half: the sums are complete after the reduce-scatter.
  const std::string phase = sim::step_activity(a, std::clamp(f.step, 0, a.steps - 1));
  begin_tracked(s);
  wrapped_text(false, "Step %d of %d%s%s", std::clamp(f.step + 1, 0, a.steps), a.steps, phase.empty() ? "" : ": ",
               phase.c_str());
  // Which way the ring turns: each GPU sends to the next in this order (the moving pieces show it only while
  // the animation plays).
  if (fills_pieces(a) && a.ranks.size() > 2) {
    std::string order;
    for (size_t r = 0; r < a.ranks.size(); ++r) {
      if (a.ranks.size() > 12 && r == 6) {
        order += "... -> ";
        r = a.ranks.size() - 4;
      }
      order += std::to_string(a.ranks[r]) + " -> ";
    }
    order += std::to_string(a.ranks.front());
    wrapped_text(false, "Ring order, each GPU sending to the next: %s", order.c_str());
  }
  wrapped_text(false, "%s per GPU sent, %s for the call, algorithm bandwidth %s, bus bandwidth %s",
               format_quantity(a.bytes_sent_per_gpu, "bytes").c_str(), format_short_time(a.total_s).c_str(),
               format_quantity(a.algbw_GBps * 1e9, "B/s").c_str(), format_quantity(a.busbw_GBps * 1e9, "B/s").c_str());
  end_tracked(s, "collective.figures");
  begin_tracked(s);
  wrapped_text(true, "%s", a.rule.c_str());
  wrapped_text(true,
               "Bus bandwidth = algorithm bandwidth (message / time) x %.4g, the factor that makes it comparable to "
               "a link's rate (nccl-tests, PERFORMANCE.md). The busiest link sets the pace: the colour of each link "
               "is its load now, grey idle to red full.",
               a.bus_factor);
  end_tracked(s, "collective.rule");
}

// ---- the panel ----------------------------------------------------------------------------------------

void draw(ExplorerState& s) {
  wrapped_text(false,
               "How GPUs combine their gradients: every chunk below moves when the flow simulator says it does, "
               "on the links of the Run chapter's cluster. A ring passes one piece of the buffer to the next GPU "
               "at each step; watch each GPU's buffer fill as the pieces are added up.");
  draw_controls(s);
  refresh(s);
  CollectiveView& v = s.collective;
  if (!v.error.empty()) {
    error_text("Cannot animate this: %s. Change the setting above (or the cluster in \"One iteration\").",
               v.error.c_str());
    return;
  }
  if (!v.anim) return;
  const sim::CollectiveAnimation& a = *v.anim;
  const sim::TopologySpec& ts = a.spec.topology;
  wrapped_text(
      true,
      "%d GPUs of %s servers with %d GPUs each; achievable rates: NVLink %s per GPU each way, network %s per server",
      a.spec.gpus, with_thousands(double(ts.nodes)).c_str(), ts.gpus_per_node,
      format_quantity(ts.nvlink_GBps_per_gpu / 2 * 1e9, "B/s").c_str(),
      format_quantity(ts.node_network_Gbps * 1e9, "b/s").c_str());
  draw_transport(s, a);
  // The buffers beside the picture where the view is wide, otherwise under the figures (which a narration
  // quotes, so they stay next to the picture).
  const bool pieces = fills_pieces(a);
  const auto filled = pieces ? contributions(a, v.t_s) : std::vector<std::vector<int>>{};
  const float fs = ImGui::GetFontSize(), w = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  const int p = int(a.ranks.size());
  const bool beside = pieces && w >= fs * 60;
  const float strip_w = beside ? std::clamp(fs * (4 + 1.6f * float(p)), fs * 18, w * 0.4f) : w;
  const float below = pieces && !beside ? buffers_height(p) : 0;
  const float picture_w = beside ? w - strip_w - gap : w;
  const bool stacked = stack_servers(a, picture_w - 32);
  const float h = stacked
                      ? stacked_height(a)
                      : std::clamp(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 6 - below,
                                   fs * (below > 0 ? 10 : 12), fs * 26);
  draw_picture(s, a, filled, ImVec2(picture_w, h), stacked);
  if (beside) {
    ImGui::SameLine();
    draw_buffers(s, a, filled, ImVec2(strip_w, 0));
  }
  draw_figures(s, a);
  if (pieces && !beside) draw_buffers(s, a, filled, ImVec2(strip_w, 0));
}

PanelRegistrar reg{
    Panel{.id = sim::CollectiveAnimationKind::kKind,
          .title = sim::CollectiveAnimationKind::kTitle,
          .chapter = Chapter::parallelism,
          .order = 20,
          .draw = draw,
          .summary = "One all-reduce, reduce-scatter, all-gather or send, chunk by chunk on the cluster's links",
          .tabs = {},
          .tab_of_widget = nullptr,
          .needs_catalog = true,
          .address = {animation_address(&ExplorerState::collective)},
          .configs = {animation_binding(&ExplorerState::collective)}}};

}  // namespace
}  // namespace mc::ui
