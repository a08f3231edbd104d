// architecture_doc_test.cpp - docs/ARCHITECTURE.md stays true to the tree: every repository path it names in
// backticks exists, and its folder map has a line for every top-level folder git tracks and for every folder
// under engine/ and ui/, so a path that moved or a new folder without a line fails here. Self-contained (no
// project header): it reads files only. MC_ARCHITECTURE_DOC=FILE checks another copy of the page instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = MC_SOURCE_DIR;

fs::path doc_path() {
  if (const char* e = std::getenv("MC_ARCHITECTURE_DOC"); e && *e) return e;
  return kSource / "docs" / "ARCHITECTURE.md";
}

std::string read_doc() {
  std::ifstream in(doc_path());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One inline code span of the page and the line (1-based) it starts on.
struct Span {
  std::string text;
  int line = 0;
};

// The inline code spans of Markdown `text`: a run of N backticks up to the next run of exactly N (a run with no
// partner is literal text). Fenced blocks (``` lines) are skipped.
std::vector<Span> code_spans(const std::string& text) {
  std::string body;  // the text with fenced blocks blanked, so line numbers stay
  bool fenced = false;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    const bool fence =
        l.find_first_not_of(" ") != std::string::npos && l.compare(l.find_first_not_of(" "), 3, "```") == 0;
    if (fence) fenced = !fenced;
    body += (fence || fenced ? std::string() : l) + "\n";
  }
  std::vector<Span> out;
  size_t i = 0;
  while ((i = body.find('`', i)) != std::string::npos) {
    const size_t n =
        body.find_first_not_of('`', i) == std::string::npos ? body.size() - i : body.find_first_not_of('`', i) - i;
    size_t close = i + n;
    for (;;) {
      close = body.find('`', close);
      if (close == std::string::npos) break;
      const size_t m = body.find_first_not_of('`', close) == std::string::npos
                           ? body.size() - close
                           : body.find_first_not_of('`', close) - close;
      if (m == n) break;
      close += m;
    }
    if (close == std::string::npos) {  // no closing run: the backticks are literal
      i += n;
      continue;
    }
    out.push_back({body.substr(i + n, close - i - n), int(std::count(body.begin(), body.begin() + long(i), '\n')) + 1});
    i = close + n;
  }
  return out;
}

// The repository path a code span names, or "" when it names none: no spaces, no URL, no glob or placeholder
// ('*', '<name>'), only characters of file names; and a '/' or a known extension. A trailing ':' and a line
// suffix (":12", ":12-30") are dropped.
std::string path_of(std::string t) {
  static const std::regex line_suffix(R"(:[0-9]+(-[0-9]+)?$)");
  t = std::regex_replace(t, line_suffix, "");
  while (!t.empty() && t.back() == ':') t.pop_back();
  if (t.empty() || t.find("://") != std::string::npos || t.front() == '-') return "";
  for (char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '/' && c != '-' && c != '+')
      return "";
  static const char* kExtensions[] = {".cpp", ".h",   ".cu",    ".cuh", ".inc", ".md",   ".json", ".sh",
                                      ".js",  ".mjs", ".cmake", ".txt", ".py",  ".html", ".png",  ".log"};
  bool known = false;
  for (const char* e : kExtensions) {
    const std::string ext = e;
    known |= t.size() > ext.size() && t.compare(t.size() - ext.size(), ext.size(), ext) == 0;
  }
  return t.find('/') != std::string::npos || known ? t : "";
}

// "path (line N)" for every path a span of `text` names that does not exist under `root`; `checked` counts them.
std::vector<std::string> missing_paths(const std::string& text, const fs::path& root, int* checked) {
  std::vector<std::string> missing;
  *checked = 0;
  for (const Span& s : code_spans(text)) {
    const std::string p = path_of(s.text);
    if (p.empty()) continue;
    ++*checked;
    std::error_code ec;
    if (!fs::exists(root / p, ec)) missing.push_back(p + " (line " + std::to_string(s.line) + ")");
  }
  return missing;
}

// The folders the section whose heading says "folder map" (up to the next heading of its level or above) gives
// a line: a list item ("- " or "* ") whose first code span is the folder, with or without a trailing '/'
// ("- `engine/core/` JSON with ..."). A folder only named inside another line's sentence has no line.
std::set<std::string> folder_map_names(const std::string& text) {
  std::set<std::string> names;
  std::istringstream lines(text);
  int level = 0;
  for (std::string l; std::getline(lines, l);) {
    const size_t hashes = l.find_first_not_of('#');
    const bool heading = hashes > 0 && hashes != std::string::npos && l[hashes] == ' ';
    if (heading && level > 0 && int(hashes) <= level) break;
    std::string lower = l;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (heading && level == 0 && lower.find("folder map") != std::string::npos) level = int(hashes);
    const size_t start = l.find_first_not_of(' ');
    const bool item = start != std::string::npos && (l.compare(start, 2, "- ") == 0 || l.compare(start, 2, "* ") == 0);
    if (level == 0 || heading || !item) continue;
    const size_t tick = l.find('`', start);
    if (l.find_first_not_of(' ', start + 2) != tick) continue;  // the item does not open with a code span
    std::vector<Span> spans = code_spans(l.substr(tick));
    if (spans.empty()) continue;
    std::string name = spans.front().text;
    while (!name.empty() && name.back() == '/') name.pop_back();
    names.insert(name);
  }
  return names;
}

// The top-level folders the repository holds: the ten below always, and every other folder git tracks (its
// index: what is committed or staged) when git can say, so a newly added one needs a line too; a hidden one,
// .ci, does not.
std::vector<std::string> top_level_folders() {
  std::vector<std::string> dirs = {"engine", "ui",    "native", "web",     "scenarios",
                                   "assets", "tests", "docs",   "scripts", "cmake"};
  const std::string cmd = "git -C '" + kSource.string() + "' ls-files 2>/dev/null | cut -s -d/ -f1 | sort -u";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) {
      std::string d = buf;
      while (!d.empty() && (d.back() == '\n' || d.back() == '\r')) d.pop_back();
      if (!d.empty() && d[0] != '.' && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    }
    pclose(p);
  }
  return dirs;
}

// Every folder under `top` on disk ("engine/train/kernels"), hidden and cache folders left out.
std::vector<std::string> folders_under(const std::string& top) {
  std::vector<std::string> out;
  const fs::path root = kSource / top;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory()) continue;
    if (name.empty() || name[0] == '.' || name.rfind("__", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    out.push_back(fs::relative(it->path(), kSource).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string listed(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

void expect_folder_lines(const std::vector<std::string>& folders) {
  const std::string doc = read_doc();
  ASSERT_FALSE(doc.empty()) << "cannot read " << doc_path();
  const std::set<std::string> names = folder_map_names(doc);
  ASSERT_FALSE(names.empty()) << doc_path() << " has no \"Folder map\" section with folders in backticks";
  std::vector<std::string> without;
  for (const std::string& f : folders)
    if (!names.count(f)) without.push_back(f);
  EXPECT_TRUE(without.empty()) << "the folder map of " << doc_path() << " has no line for (write `FOLDER/` and what "
                               << "lives there):" << listed(without);
}

}  // namespace

TEST(ArchitectureDoc, EveryPathItNamesExists) {
  const std::string doc = read_doc();
  ASSERT_FALSE(doc.empty()) << "cannot read " << doc_path();
  int checked = 0;
  const std::vector<std::string> missing = missing_paths(doc, kSource, &checked);
  EXPECT_GE(checked, 20) << "too few paths found in " << doc_path() << ": is the page (or this parser) broken?";
  EXPECT_TRUE(missing.empty()) << doc_path() << " names paths that do not exist under " << kSource
                               << " (fix the page, or the path if a file moved):" << listed(missing);
}

TEST(ArchitectureDoc, FolderMapHasEveryTopLevelFolder) { expect_folder_lines(top_level_folders()); }

TEST(ArchitectureDoc, FolderMapHasEveryEngineFolder) {
  const std::vector<std::string> folders = folders_under("engine");
  ASSERT_GE(folders.size(), 10u) << "engine/ has fewer folders than expected under " << kSource;
  expect_folder_lines(folders);
}

TEST(ArchitectureDoc, FolderMapHasEveryUiFolder) { expect_folder_lines(folders_under("ui")); }

TEST(ArchitectureDoc, TheCheckerTellsPathsFromCode) {
  // Which spans are paths: the checks above are only as good as this.
  EXPECT_EQ(path_of("engine/core/json_doc.h"), "engine/core/json_doc.h");
  EXPECT_EQ(path_of("engine/core/json_doc.h:12"), "engine/core/json_doc.h");
  EXPECT_EQ(path_of("engine/core/json_doc.h:12-30"), "engine/core/json_doc.h");
  EXPECT_EQ(path_of("engine/cli/"), "engine/cli/");
  EXPECT_EQ(path_of("README.md"), "README.md");
  EXPECT_EQ(path_of("scripts/format.sh:"), "scripts/format.sh");
  for (const char* code : {"mc::device::Device", "ui/panels/<name>_panel.cpp", "*_device.cpp", "https://a.b/c.md",
                           "bash scripts/format.sh", "?panel=sim/links", "--check", "kMax*Bytes", "MC_HAVE_CUDA"})
    EXPECT_EQ(path_of(code), "") << code;
  // A page with one bad path among good ones, a fenced block and a literal backtick.
  const std::string page =
      "# A\n## Folder map\n- `engine/` and `engine/core`\n  * `engine/sim` x\n## Next\n- `ui/` x\n"
      "Paths `engine/core/json_doc.h`, `engine/no_such_file.cpp:3` and `*_device.cpp`.\n"
      "```\n`engine/in_a_fence.cpp`\n```\n``a `engine/nested` span`` and a lone ` tick\n";
  int checked = 0;
  EXPECT_EQ(missing_paths(page, kSource, &checked), std::vector<std::string>{"engine/no_such_file.cpp (line 7)"});
  EXPECT_EQ(checked, 6);  // engine/, engine/core, engine/sim, ui/, json_doc.h, no_such_file.cpp
  // engine/core is named in engine/'s line, not on one of its own; ui/ is in another section.
  EXPECT_EQ(folder_map_names(page), (std::set<std::string>{"engine", "engine/sim"}));
}
