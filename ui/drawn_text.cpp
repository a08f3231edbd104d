// drawn_text.cpp - glyphs read back from ImGui's draw lists (see drawn_text.h).
#include "ui/drawn_text.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

namespace mc::ui {

namespace {

struct FontGlyph {  // copies, not pointers: a test's next ImGui context may reuse the freed addresses
  ImFontGlyph glyph;
  float space_advance, font_size;
};

// ImFont::RenderText writes each visible glyph as one quad, vertices (x0,y0) (x1,y0) (x1,y1) (x0,y1) with the
// glyph's atlas rectangle as UVs: that rectangle names the glyph. A glyph cut by CPU clipping has other UVs
// and is not found, which is right: it is not wholly on screen.
using UvKey = std::tuple<float, float, float, float>;

// Built once per atlas (the mask runs every frame a question is open): rebuilt when the atlas or its
// glyphs change (a new context, a font added or rebuilt).
const std::map<UvKey, FontGlyph>& glyphs_by_uv() {
  static std::map<UvKey, FontGlyph> out;
  static std::tuple<const ImFontAtlas*, const ImFont*, int, int, int, float, float> built_for{};
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  int count = 0;
  for (const ImFont* f : atlas->Fonts) count += f->Glyphs.Size;
  const ImFont* first = atlas->Fonts.Size > 0 ? atlas->Fonts[0] : nullptr;
  const auto key = std::make_tuple(atlas, first, count, atlas->TexWidth, atlas->TexHeight, atlas->TexUvWhitePixel.x,
                                   atlas->TexUvWhitePixel.y);
  if (key == built_for) return out;
  built_for = key;
  out.clear();
  for (const ImFont* f : atlas->Fonts)
    for (const ImFontGlyph& g : f->Glyphs)
      if (g.Visible) out[{g.U0, g.V0, g.U1, g.V1}] = {g, f->GetCharAdvance(' '), f->FontSize};
  return out;
}

void append_utf8(std::string& s, unsigned c) {
  if (c < 0x80) {
    s += char(c);
  } else if (c < 0x800) {
    s += char(0xC0 | (c >> 6)), s += char(0x80 | (c & 0x3F));
  } else {
    s += char(0xE0 | (c >> 12)), s += char(0x80 | ((c >> 6) & 0x3F)), s += char(0x80 | (c & 0x3F));
  }
}

struct Found {
  unsigned cp, vtx;
  bool visible;
  float pen_x, pen_y, advance, space, height;
};

std::vector<Found> glyphs_of(const ImDrawList* list, const std::map<UvKey, FontGlyph>& by_uv) {
  std::vector<Found> out;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImTextureID font_tex = ImGui::GetIO().Fonts->TexID;
  for (const ImDrawCmd& cmd : list->CmdBuffer) {
    if (cmd.UserCallback || cmd.TextureId != font_tex) continue;
    const ImDrawIdx* idx = list->IdxBuffer.Data + cmd.IdxOffset;
    const unsigned n = cmd.ElemCount;
    // Primitives are whole triangles: step by one, and by two where a glyph's quad was found.
    for (unsigned i = 0; i + 6 <= n; i += 3) {
      const unsigned a = idx[i];
      if (idx[i + 1] != a + 1 || idx[i + 2] != a + 2 || idx[i + 3] != a || idx[i + 4] != a + 2 || idx[i + 5] != a + 3)
        continue;
      const unsigned v = a + cmd.VtxOffset;
      if (v + 3 >= unsigned(list->VtxBuffer.Size)) continue;
      const ImDrawVert& p0 = list->VtxBuffer[int(v)];
      const ImDrawVert& p2 = list->VtxBuffer[int(v + 2)];
      const auto it = by_uv.find({p0.uv.x, p0.uv.y, p2.uv.x, p2.uv.y});
      if (it == by_uv.end()) continue;
      const ImFontGlyph& g = it->second.glyph;
      const float scale = g.X1 > g.X0   ? (p2.pos.x - p0.pos.x) / (g.X1 - g.X0)
                          : g.Y1 > g.Y0 ? (p2.pos.y - p0.pos.y) / (g.Y1 - g.Y0)
                                        : 1.0f;
      // Shown: at least 70% of its width and of its height inside the clip rect and the display. A glyph cut by
      // a pixel is still read: a child window without a border clips 1 px inside where its text starts, and the
      // first letter of each line there ("This screen assumes") was lost to the mirror and the tests.
      const ImVec4& c = cmd.ClipRect;
      const float cx0 = std::max(c.x, 0.0f), cy0 = std::max(c.y, 0.0f), cx1 = std::min(c.z, display.x),
                  cy1 = std::min(c.w, display.y);
      const float qw = std::max(p2.pos.x - p0.pos.x, 1e-3f), qh = std::max(p2.pos.y - p0.pos.y, 1e-3f);
      const float in_x = std::min(p2.pos.x, cx1) - std::max(p0.pos.x, cx0),
                  in_y = std::min(p2.pos.y, cy1) - std::max(p0.pos.y, cy0);
      const bool visible = in_x >= 0.7f * qw - 0.5f && in_y >= 0.7f * qh - 0.5f;
      out.push_back({unsigned(g.Codepoint), v, visible, p0.pos.x - g.X0 * scale, p0.pos.y - g.Y0 * scale,
                     g.AdvanceX * scale, it->second.space_advance * scale, it->second.font_size * scale});
      i += 3;
    }
  }
  return out;
}

// Glyphs on one pen line, left to right, with a space wherever the gap is half a space or more.
std::vector<DrawnLine> lines_of(ImDrawList* list, std::vector<Found> gs, bool visible_only) {
  if (visible_only) gs.erase(std::remove_if(gs.begin(), gs.end(), [](const Found& f) { return !f.visible; }), gs.end());
  std::stable_sort(gs.begin(), gs.end(), [](const Found& a, const Found& b) {
    const long ya = std::lround(a.pen_y), yb = std::lround(b.pen_y);
    return ya != yb ? ya < yb : a.pen_x < b.pen_x;
  });
  std::vector<DrawnLine> out;
  for (size_t i = 0; i < gs.size(); ++i) {
    const Found& f = gs[i];
    if (i == 0 || std::lround(f.pen_y) != std::lround(gs[i - 1].pen_y)) {
      out.emplace_back();
      out.back().list = list;
    } else if (f.pen_x - (gs[i - 1].pen_x + gs[i - 1].advance) >= 0.5f * f.space) {
      out.back().text += ' ';
    }
    DrawnLine& l = out.back();
    l.glyphs.push_back({l.text.size(), f.vtx, f.visible, f.pen_x, f.pen_x + f.advance, f.pen_y, f.pen_y + f.height});
    append_utf8(l.text, f.cp);
  }
  return out;
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool digit(const std::string& s, size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// Where `word` (spaces collapsed) occurs in `text` without continuing a longer number.
std::vector<size_t> occurrences(const std::string& text, const std::string& word) {
  std::vector<size_t> out;
  if (word.empty()) return out;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    auto number_at = [&](size_t i, size_t next) {  // a digit, or a '.'/',' with a digit beyond it
      return digit(text, i) || (i < text.size() && (text[i] == '.' || text[i] == ',') && digit(text, next));
    };
    const bool number_before = digit(word, 0) && at > 0 && number_at(at - 1, at >= 2 ? at - 2 : text.size());
    const bool number_after = digit(word, word.size() - 1) && number_at(end, end + 1);
    if (!number_before && !number_after) out.push_back(at);
  }
  return out;
}

}  // namespace

std::vector<ImDrawList*> window_draw_lists(const ImGuiWindow* root) {
  std::vector<ImDrawList*> out;
  if (!root) return out;
  for (ImGuiWindow* w : GImGui->Windows)
    if (w->WasActive && !w->Hidden && (w == root || w->RootWindow == root)) out.push_back(w->DrawList);
  return out;
}

std::vector<DrawnLine> drawn_lines(const std::vector<ImDrawList*>& lists) {
  const auto& by_uv = glyphs_by_uv();
  std::vector<DrawnLine> out;
  for (ImDrawList* l : lists)
    for (DrawnLine& line : lines_of(l, glyphs_of(l, by_uv), false)) out.push_back(std::move(line));
  return out;
}

std::string visible_text(const std::vector<ImDrawList*>& lists) {
  const auto& by_uv = glyphs_by_uv();
  std::string out;
  for (ImDrawList* l : lists)
    for (const DrawnLine& line : lines_of(l, glyphs_of(l, by_uv), true)) out += line.text + "\n";
  return out;
}

bool contains_word(const std::string& text, const std::string& word) {
  return !occurrences(collapse_spaces(text), collapse_spaces(word)).empty();
}

namespace {

// Draws `hit` (glyphs of one line, left to right) as one solid box: each glyph a block reaching the next.
void mask_glyphs(ImDrawList* list, const std::vector<const DrawnGlyph*>& hit) {
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  const ImU32 col = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.55f);
  for (size_t k = 0; k < hit.size(); ++k) {
    const float x1 = k + 1 < hit.size() ? hit[k + 1]->x0 : hit[k]->x1;
    const ImVec2 corners[4] = {{hit[k]->x0, hit[k]->y0}, {x1, hit[k]->y0}, {x1, hit[k]->y1}, {hit[k]->x0, hit[k]->y1}};
    for (int c = 0; c < 4; ++c) {
      ImDrawVert& v = list->VtxBuffer[int(hit[k]->vtx) + c];
      v.pos = corners[c];
      v.uv = white;
      v.col = col;
    }
  }
}

// The glyphs of `line` whose bytes lie in [from, to).
std::vector<const DrawnGlyph*> glyphs_in(const DrawnLine& line, size_t from, size_t to) {
  std::vector<const DrawnGlyph*> hit;
  for (const DrawnGlyph& g : line.glyphs)
    if (g.at >= from && g.at < to) hit.push_back(&g);
  return hit;
}

}  // namespace

int mask_words(const std::vector<ImDrawList*>& lists, const std::vector<std::string>& words) {
  if (words.empty()) return 0;
  int masked = 0;
  std::vector<DrawnLine> lines = drawn_lines(lists);
  for (size_t i = 0; i < lines.size(); ++i) {
    const DrawnLine& line = lines[i];
    // A value wrapped onto the next line ("2.42" at a line's end, "M GPU-hours" below) is masked too: the
    // two lines read as one with a space between, and an occurrence across the break covers both ends.
    const DrawnLine* next = i + 1 < lines.size() && lines[i + 1].list == line.list ? &lines[i + 1] : nullptr;
    const std::string joined = next ? line.text + " " + next->text : line.text;
    const size_t split = line.text.size() + 1;  // where the next line's bytes start in `joined`
    for (const std::string& w : words) {
      const std::string word = collapse_spaces(w);
      for (size_t at : occurrences(joined, word)) {
        const size_t to = at + word.size();
        if (at >= line.text.size()) break;  // within the next line: masked when that line is the first
        ++masked;
        mask_glyphs(line.list, glyphs_in(line, at, to));
        if (to > split) mask_glyphs(next->list, glyphs_in(*next, 0, to - split));
      }
    }
  }
  return masked;
}

}  // namespace mc::ui
