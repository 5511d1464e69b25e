// escape.h — the one place where text from a report (a host, a model, a scenario, a tensor name, a
// check's detail: all of it editable by whoever wrote the report.json) enters a format: XML and
// HTML (report.junit.xml, report.html and the other HTML pages), Markdown (report.md, `gate
// --format md`: CI job summaries) and CSV, so that it always reads as text and never as markup.
#pragma once

#include <string>
#include <string_view>

namespace ddpbench::reports {

// XML-escapes text for attributes and element content (HTML too); C0 controls XML cannot carry
// (all but tab, LF, CR) become U+FFFD.
std::string xml_escape(const std::string& s);

// `value` as inline Markdown text: one line (CR, LF and other control bytes become spaces, so a
// value can never start a line: no heading, list, code fence or table row of its own), HTML's
// <, > and & as entities (no tag, no comment), and the inline metacharacters \ ` * [ ] # | ~ $
// backslash-escaped (no code span, emphasis, link, table cell, strikethrough or math). `_` is
// escaped unless it sits between two letters or digits of the value, where CommonMark never reads
// it as emphasis: linear_mse stays readable. ( ) . - + need nothing: they are markup only at the
// start of a line or after a `]`, and both are excluded above.
std::string markdown_escape(std::string_view value);

// One CSV field, RFC 4180: quoted when it holds separators, quotes or line breaks (a bare CR ends
// a row for many readers as LF does).
std::string csv_field(const std::string& s);

}  // namespace ddpbench::reports
