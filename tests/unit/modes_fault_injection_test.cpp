// modes_fault_injection_test.cpp — the --inject-fault grammar and its error messages.
#include <gtest/gtest.h>

#include "errors.h"
#include "modes/common/fault_injection.h"
#include "modes/common/fault_table.h"

namespace ddpbench::modes {
namespace {

TEST(FaultInjection, ParsesEveryKindAndField) {
  FaultSpec f = parse_fault("grad:rank=1,step=3");
  EXPECT_EQ(f.kind, FaultKind::kGrad);
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.step, 3);
  EXPECT_DOUBLE_EQ(f.eps, 1e-3);
  f = parse_fault("grad:rank=0,step=0,eps=1e-9,tensor=fc.weight");
  EXPECT_DOUBLE_EQ(f.eps, 1e-9);
  EXPECT_EQ(f.tensor, "fc.weight");
  EXPECT_EQ(parse_fault("crash:rank=2,step=1").kind, FaultKind::kCrash);
  EXPECT_EQ(parse_fault("hang:rank=0,step=0").kind, FaultKind::kHang);
  EXPECT_EQ(parse_fault("nan:rank=0,step=5").kind, FaultKind::kNan);
  EXPECT_EQ(parse_fault("buffers:rank=1,step=1").kind, FaultKind::kBuffers);
  EXPECT_EQ(parse_fault("dpbuffers:step=1").kind, FaultKind::kDpBuffers);
  EXPECT_STREQ(fault_name(FaultKind::kBuffers), "buffers");
  EXPECT_STREQ(fault_name(FaultKind::kDpBuffers), "dpbuffers");
  EXPECT_EQ(parse_fault("noscale:step=2").kind, FaultKind::kNoScale);
  EXPECT_EQ(parse_fault("noscale:step=2").step, 2);
  EXPECT_STREQ(fault_name(FaultKind::kNoScale), "noscale");
  f = parse_fault("eval:rank=2");
  EXPECT_EQ(f.kind, FaultKind::kEval);
  EXPECT_EQ(f.rank, 2);
  EXPECT_STREQ(fault_name(FaultKind::kEval), "eval");
  EXPECT_EQ(parse_fault("join:rank=0,step=5").kind, FaultKind::kJoin);
  EXPECT_STREQ(fault_name(FaultKind::kJoin), "join");
  f = parse_fault("state:rank=1,step=2,eps=0.5");
  EXPECT_EQ(f.kind, FaultKind::kState);
  EXPECT_DOUBLE_EQ(f.eps, 0.5);
  EXPECT_STREQ(fault_name(FaultKind::kState), "state");
}

TEST(FaultInjection, RejectsMalformedSpecsWithTheSyntax) {
  for (const char* bad : {"boom:rank=1", "grad:rank", "grad:rank=x", "grad:rank=1,step=-2",
                          "grad:rank=1,colour=red", "grad:eps=", "grad:rank=1,step=1,eps=nan",
                          "grad:rank=1,step=1,eps=inf", "grad:rank=1,step=1,eps=0"}) {
    try {
      parse_fault(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("KIND:rank=R,step=S"), std::string::npos) << e.what();
    }
  }
}

TEST(FaultInjection, RequiresRankAndStepAndRefusesRepeatsAndStrayFields) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"crash", "rank is missing"},
      {"crash:step=1", "rank is missing"},
      {"hang:rank=1", "step is missing"},
      {"grad:rank=1,step=1,rank=0", "'rank' is given twice"},
      {"grad:rank=1,step=1,eps=1,eps=2", "'eps' is given twice"},
      {"dpbuffers:rank=1,step=1", "dpbuffers has no rank"},
      {"dpbuffers", "step is missing"},
      {"noscale:rank=0,step=1", "noscale has no rank"},
      {"noscale", "step is missing"},
      {"eval", "rank is missing"},
      {"eval:rank=1,step=0", "eval has no step"},
      {"nan:rank=1,step=1,eps=2", "eps= applies to grad, shard and state"},
      {"crash:rank=1,step=1,tensor=fc.weight", "tensor= applies to grad"},
      {"shard:rank=1,step=1,tensor=fc.weight", "drop tensor="},
      {"state:rank=1,step=1,tensor=fc.weight", "drop tensor="},
  };
  for (const auto& [spec, expected] : cases) {
    try {
      parse_fault(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << spec << ": " << e.what();
    }
  }
}

TEST(FaultInjection, EchoesHostileTextQuotedAndShort) {
  const std::string hostile = "\x1b[31mred" + std::string(100000, 'x');
  try {
    parse_fault("\x1b" + hostile);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 1000u);
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
    EXPECT_NE(what.find("\\x1b"), std::string::npos) << what;
    EXPECT_NE(what.find("bytes)"), std::string::npos) << what;
  }
}

TEST(FaultInjection, FiresOnlyOnItsRankAndStep) {
  const std::optional<FaultSpec> f = parse_fault("nan:rank=1,step=2");
  EXPECT_TRUE(fault_fires(f, FaultKind::kNan, 1, 2));
  EXPECT_FALSE(fault_fires(f, FaultKind::kNan, 0, 2));
  EXPECT_FALSE(fault_fires(f, FaultKind::kNan, 1, 3));
  EXPECT_FALSE(fault_fires(f, FaultKind::kCrash, 1, 2));
  EXPECT_FALSE(fault_fires(std::nullopt, FaultKind::kNan, 1, 2));
}

TEST(FaultInjection, LastingFaultsAreActiveFromTheirStepOn) {
  const std::optional<FaultSpec> f = parse_fault("buffers:rank=1,step=2");
  EXPECT_FALSE(fault_active(f, FaultKind::kBuffers, 1, 1));
  EXPECT_TRUE(fault_active(f, FaultKind::kBuffers, 1, 2));
  EXPECT_TRUE(fault_active(f, FaultKind::kBuffers, 1, 7));
  EXPECT_FALSE(fault_active(f, FaultKind::kBuffers, 0, 7));
  EXPECT_FALSE(fault_active(f, FaultKind::kSyncBn, 1, 7));
}

// KIND:f1,f2,... from the fields of `texts`.
std::string fault_text(const char* kind, const std::vector<std::string>& texts) {
  std::string out = std::string(kind) + ":";
  for (size_t i = 0; i < texts.size(); ++i) out += (i ? "," : "") + texts[i];
  return out;
}

std::string refusal_of(const std::string& text) {
  try {
    parse_fault(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every row parses with its own syntax, and refuses each field it does not take and each
// required field left out (fault_table.h drives the grammar).
TEST(FaultTable, EveryRowParsesItsOwnFieldsAndNoOthers) {
  struct Field {
    const char* key;
    const char* text;
    FaultField bit;
  };
  const Field fields[] = {{"rank", "rank=1", kFaultRank},
                          {"step", "step=1", kFaultStep},
                          {"eps", "eps=0.5", kFaultEps},
                          {"tensor", "tensor=fc.weight", kFaultTensor},
                          {"ms", "ms=5", kFaultMs}};
  for (const FaultRow& row : fault_rows()) {
    std::vector<std::string> taken;
    for (const Field& f : fields) {
      if (row.fields & f.bit) taken.emplace_back(f.text);
    }
    EXPECT_EQ(parse_fault(fault_text(row.name, taken)).kind, row.kind) << row.name;
    EXPECT_STREQ(fault_name(row.kind), row.name);
    for (const Field& f : fields) {
      if (!(row.fields & f.bit)) {
        std::vector<std::string> extra = taken;
        extra.emplace_back(f.text);
        const std::string said = refusal_of(fault_text(row.name, extra));
        EXPECT_NE(said.find(std::string(row.name) + " has no " + f.key), std::string::npos)
            << row.name << " with " << f.text << ": " << said;
      } else if (f.bit == kFaultRank || f.bit == kFaultStep || f.bit == kFaultMs) {
        std::vector<std::string> missing;
        for (const std::string& t : taken) {
          if (t != f.text) missing.push_back(t);
        }
        const std::string said = refusal_of(fault_text(row.name, missing));
        EXPECT_NE(said.find(std::string(f.key) + " is missing"), std::string::npos)
            << row.name << " without " << f.key << ": " << said;
      }
    }
  }
}

TEST(FaultTable, TheUsageNamesEveryKindWithItsSyntaxAndModes) {
  const std::string usage = fault_usage();
  for (const FaultRow& row : fault_rows()) {
    const bool plain = row.fields == (kFaultRank | kFaultStep);
    EXPECT_NE(usage.find((plain ? std::string(row.name) : fault_syntax(row)) + " (" +
                         fault_modes_text(row)),
              std::string::npos)
        << row.name << " in " << usage;
    EXPECT_NE(fault_table_markdown().find("| `" + fault_syntax(row) + "` |"), std::string::npos)
        << row.name;
  }
  EXPECT_EQ(fault_modes_text(fault_row(FaultKind::kNoScale)), "dp, ddp or zero");
  EXPECT_EQ(fault_modes_text(fault_row(FaultKind::kDpBuffers)), "dp");
  EXPECT_EQ(find_fault_row("boom"), nullptr);
}

}  // namespace
}  // namespace ddpbench::modes
