// plain_yaml.cpp — see plain_yaml.h. A first pass over yaml-cpp's parse events sees anchors,
// aliases, tags and documents, which the node tree hides (an alias there is the node it names,
// so counting nodes would already have to walk the expansion); only a file that passes is loaded.
#include "scenarios/plain_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::scenarios {
namespace {

class PlainYamlCheck : public YAML::EventHandler {
 public:
  PlainYamlCheck(const std::string& path, const std::string& flag) : path_(path), flag_(flag) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { refuse_anchor(mark); }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override { refuse_anchor(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string&) override {
    check_tag(mark, tag);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    check_tag(mark, tag);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    check_tag(mark, tag);
  }
  void OnMapEnd() override {}

 private:
  [[noreturn]] void refuse_anchor(const YAML::Mark& mark) const {
    throw InputError(fmt::format(
        "{} {} line {}: YAML anchors and aliases (&name, *name) are not accepted in a scenario "
        "file: write each value out",
        flag_, quoted_input(path_), mark.line + 1));
  }
  // yaml-cpp reports "?" for an untagged node and "!" for a quoted scalar; anything else was
  // written as a tag (!foo, !!str) and would be dropped without a word.
  void check_tag(const YAML::Mark& mark, const std::string& tag) const {
    if (tag.empty() || tag == "?" || tag == "!") return;
    throw InputError(
        fmt::format("{} {} line {}: YAML tag {} is not accepted in a scenario file: drop it and "
                    "write the plain value",
                    flag_, quoted_input(path_), mark.line + 1, quoted_input(tag)));
  }

  const std::string& path_;
  const std::string& flag_;
};

std::string read_capped(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{} {}: cannot be read", flag, quoted_input(path)));
  std::string text;
  text.resize(kMaxScenarioFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxScenarioFileBytes) {
    throw InputError(fmt::format(
        "{} {} is larger than {} KiB, far more than any scenario file: pass a scenario file "
        "(`ddpbench list --yaml toy_cnn` prints one)",
        flag, quoted_input(path), kMaxScenarioFileBytes / 1024));
  }
  return text;
}

}  // namespace

YAML::Node load_plain_yaml(const std::string& path, const std::string& flag) {
  const std::string text = read_capped(path, flag);
  try {
    std::istringstream events(text);
    YAML::Parser parser(events);
    PlainYamlCheck check(path, flag);
    parser.HandleNextDocument(check);
    // The mark of the next event is the second document's first line; yaml-cpp only reports it
    // through the handler, so a one-off handler records it.
    struct SecondDocument : PlainYamlCheck {
      using PlainYamlCheck::PlainYamlCheck;
      void OnDocumentStart(const YAML::Mark& mark) override { line = mark.line + 1; }
      int line = 0;
    } second(path, flag);
    if (parser.HandleNextDocument(second)) {
      throw InputError(fmt::format(
          "{} {} line {}: a second YAML document (after ---) is not accepted: a scenario file is "
          "one document; drop the --- and merge the keys, or use two files",
          flag, quoted_input(path), second.line));
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{} {} line {}, column {}: YAML syntax error: {}", flag,
                                 quoted_input(path), e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

}  // namespace ddpbench::scenarios
