// glossary.h - assets/glossary.json: the plain-language definition of each term the explorer draws, and the
// opening lines of each chapter. Read once, every key checked (LoadError names the file, line and key).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mc {

// A term and where it was introduced; `forms` are the spellings matched as whole words in drawn text.
struct GlossaryTerm {
  std::string term;                // "MFU"
  std::vector<std::string> forms;  // "1F1B", "1f1b"; the term itself when the file gives none
  std::string definition, source;  // source: "Chowdhery et al. 2022"
};

struct Glossary {
  std::vector<GlossaryTerm> terms;
  std::map<std::string, std::string> chapter_openings;  // chapter id -> its opening lines
};

Glossary load_glossary(const std::string& path);

}  // namespace mc
