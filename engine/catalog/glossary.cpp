// glossary.cpp - reading assets/glossary.json (glossary.h).
#include "catalog/glossary.h"

#include "core/json_doc.h"

namespace mc {

Glossary load_glossary(const std::string& path) {
  const JsonDoc doc = JsonDoc::load(path);
  const JsonCursor root = doc.root();
  root.only_keys({"description", "terms", "chapters"});
  Glossary g;
  for (const JsonCursor& t : root["terms"].elements()) {
    t.only_keys({"term", "forms", "definition", "source"});
    GlossaryTerm term{t["term"].string(), {}, t["definition"].string(), t.string_or("source", "")};
    if (auto forms = t.get("forms"))
      for (const JsonCursor& f : forms->elements()) term.forms.push_back(f.string());
    if (term.forms.empty()) term.forms.push_back(term.term);
    g.terms.push_back(std::move(term));
  }
  if (auto chapters = root.get("chapters"))
    for (const auto& [chapter, text] : chapters->items()) g.chapter_openings[chapter] = text.string();
  return g;
}

}  // namespace mc
