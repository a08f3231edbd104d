// include_graph_test.cpp - engine/ folders must not include each other in a loop (STYLE: "no include
// cycle between engine folders"). Reads every source under engine/, takes `#include "folder/..."` lines
// naming another engine folder as an edge folder -> folder, and fails naming a cycle and the files that
// make it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Graph {
  std::map<std::string, std::set<std::string>> edges;
  std::map<std::pair<std::string, std::string>, std::string> witness;  // an including file per edge
};

Graph engine_graph(const fs::path& engine) {
  Graph g;
  const std::regex inc(R"(^\s*#\s*include\s+"([A-Za-z0-9_]+)/)");
  for (const auto& e : fs::recursive_directory_iterator(engine)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".inc") continue;
    const std::string from = fs::relative(e.path(), engine).begin()->string();
    std::ifstream in(e.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, inc) && m[1] != from && fs::is_directory(engine / m[1].str())) {
        g.edges[from].insert(m[1]);
        g.witness[{from, m[1]}] = fs::relative(e.path(), engine.parent_path()).string();
      }
  }
  return g;
}

// The first cycle found by depth-first search, as a path a -> b -> ... -> a; empty when there is none.
std::vector<std::string> find_cycle(const Graph& g) {
  std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack, cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& n) {
    state[n] = 1;
    stack.push_back(n);
    auto it = g.edges.find(n);
    if (it != g.edges.end())
      for (const std::string& m : it->second) {
        if (state[m] == 1) {
          auto at = std::find(stack.begin(), stack.end(), m);
          cycle.assign(at, stack.end());
          cycle.push_back(m);
          return true;
        }
        if (state[m] == 0 && visit(m)) return true;
      }
    stack.pop_back();
    state[n] = 2;
    return false;
  };
  for (const auto& [n, _] : g.edges)
    if (state[n] == 0 && visit(n)) break;
  return cycle;
}

}  // namespace

TEST(IncludeGraph, EngineFoldersHaveNoCycle) {
  const Graph g = engine_graph(fs::path(MC_SOURCE_DIR) / "engine");
  ASSERT_FALSE(g.edges.empty());
  const std::vector<std::string> cycle = find_cycle(g);
  std::string why;
  for (size_t i = 0; i + 1 < cycle.size(); ++i)
    why += "\n  " + cycle[i] + " -> " + cycle[i + 1] + " (" + g.witness.at({cycle[i], cycle[i + 1]}) + ")";
  EXPECT_TRUE(cycle.empty()) << "include cycle between engine folders:" << why;
}

TEST(IncludeGraph, TheCheckFindsACycle) {
  // The detector itself: a -> b -> c -> a is reported, a -> b -> c is not.
  Graph g;
  g.edges = {{"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}};
  EXPECT_EQ(find_cycle(g), (std::vector<std::string>{"a", "b", "c", "a"}));
  g.edges["c"].clear();
  EXPECT_TRUE(find_cycle(g).empty());
}
