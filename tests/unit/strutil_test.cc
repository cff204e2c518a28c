// Redis-compatible number parsing/formatting and glob matching (common/strutil.h).
#include "common/strutil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace basalt {
namespace {

// ---------------------------------------------------------------------------------------------
// ParseInt64

TEST(ParseInt64Test, AcceptsCanonicalForms) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("1"), 1);
  EXPECT_EQ(ParseInt64("-1"), -1);
  EXPECT_EQ(ParseInt64("10"), 10);
  EXPECT_EQ(ParseInt64("123456789"), 123456789);
  EXPECT_EQ(ParseInt64("-987654321"), -987654321);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
}

TEST(ParseInt64Test, AcceptsInt64Min) {
  EXPECT_EQ(ParseInt64("-9223372036854775808"), INT64_MIN);
}

TEST(ParseInt64Test, RejectsNonCanonicalForms) {
  EXPECT_EQ(ParseInt64("+1"), std::nullopt);
  EXPECT_EQ(ParseInt64(" 1"), std::nullopt);
  EXPECT_EQ(ParseInt64("1 "), std::nullopt);
  EXPECT_EQ(ParseInt64("01"), std::nullopt);
  EXPECT_EQ(ParseInt64("00"), std::nullopt);
  EXPECT_EQ(ParseInt64("-0"), std::nullopt);
  EXPECT_EQ(ParseInt64("-01"), std::nullopt);
  EXPECT_EQ(ParseInt64(""), std::nullopt);
  EXPECT_EQ(ParseInt64("-"), std::nullopt);
  EXPECT_EQ(ParseInt64("1a"), std::nullopt);
  EXPECT_EQ(ParseInt64("0x10"), std::nullopt);
  EXPECT_EQ(ParseInt64("1.0"), std::nullopt);
  EXPECT_EQ(ParseInt64("1e3"), std::nullopt);
  EXPECT_EQ(ParseInt64(std::string_view("1\0", 2)), std::nullopt);
}

TEST(ParseInt64Test, RejectsOverflow) {
  EXPECT_EQ(ParseInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseInt64("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(ParseInt64("18446744073709551615"), std::nullopt);
  EXPECT_EQ(ParseInt64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseInt64("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseInt64("123456789012345678901"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// ParseLongDouble / ParseDouble

TEST(ParseLongDoubleTest, AcceptsFiniteNumbers) {
  EXPECT_EQ(ParseLongDouble("1.5"), 1.5L);
  EXPECT_EQ(ParseLongDouble("-2"), -2.0L);
  EXPECT_EQ(ParseLongDouble("1e3"), 1000.0L);
  EXPECT_EQ(ParseLongDouble("0"), 0.0L);
  EXPECT_EQ(ParseLongDouble(".5"), 0.5L);
  EXPECT_EQ(ParseLongDouble("10"), 10.0L);
}

TEST(ParseLongDoubleTest, InfinityOnlyWhenAllowed) {
  EXPECT_EQ(ParseLongDouble("inf"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("-inf", false), std::nullopt);
  auto pos = ParseLongDouble("inf", true);
  ASSERT_TRUE(pos.has_value());
  EXPECT_TRUE(std::isinf(*pos) && *pos > 0);
  auto plus = ParseLongDouble("+inf", true);
  ASSERT_TRUE(plus.has_value());
  EXPECT_TRUE(std::isinf(*plus) && *plus > 0);
  auto neg = ParseLongDouble("-inf", true);
  ASSERT_TRUE(neg.has_value());
  EXPECT_TRUE(std::isinf(*neg) && *neg < 0);
}

TEST(ParseLongDoubleTest, RejectsOverflowAndUnderflowEvenWithInfAllowed) {
  // Redis string2ld: ERANGE to +-HUGE_VAL or to zero is an error; only a literal "inf" is inf.
  EXPECT_EQ(ParseLongDouble("1e5000", true), std::nullopt);
  EXPECT_EQ(ParseLongDouble("-1e5000", true), std::nullopt);
  EXPECT_EQ(ParseLongDouble("1e-5000", true), std::nullopt);
}

TEST(ParseLongDoubleTest, RejectsNaN) {
  EXPECT_EQ(ParseLongDouble("nan"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("nan", true), std::nullopt);
  EXPECT_EQ(ParseLongDouble("NaN", true), std::nullopt);
  EXPECT_EQ(ParseLongDouble("-nan", true), std::nullopt);
}

TEST(ParseLongDoubleTest, RejectsSpacesAndGarbage) {
  EXPECT_EQ(ParseLongDouble(""), std::nullopt);
  EXPECT_EQ(ParseLongDouble(" 1"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("1 "), std::nullopt);
  EXPECT_EQ(ParseLongDouble("\t1"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("1\n"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("abc"), std::nullopt);
  EXPECT_EQ(ParseLongDouble("1.5x"), std::nullopt);
  EXPECT_EQ(ParseLongDouble(std::string_view("1\0", 2)), std::nullopt);
}

TEST(ParseDoubleTest, AcceptsFiniteNumbers) {
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("-0.25"), -0.25);
  EXPECT_EQ(ParseDouble("3"), 3.0);
  EXPECT_EQ(ParseDouble("1e2"), 100.0);
}

// Short decimals are parsed without strtod (Clinger's fast path); every result, -0 included,
// must be the very double strtod gives, and every form strtod takes must still be taken.
TEST(ParseDoubleTest, ShortDecimalsParseToTheDoubleStrtodGives) {
  std::mt19937_64 rng(7);
  auto same = [](std::string_view text) {
    std::string copy(text);
    char* end = nullptr;
    double expected = strtod(copy.c_str(), &end);
    std::optional<double> got = ParseDouble(text);
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(std::memcmp(&*got, &expected, sizeof(double)), 0)
        << text << " gave " << *got << ", strtod " << expected;
  };
  for (const char* text : {"0", "-0", "-0.0", "0.", ".5", "-.5", "1.", "007", "123456789012345",
                           "-999999999999999", "0.000000000000000000001", "9007199254740993",
                           "1234567890.12345", "0.1", "0.3", "-2.5e3", "+1.5", "1e22", "0x1p3"}) {
    same(text);
  }
  const char digits[] = "0123456789";
  for (int i = 0; i < 200000; i++) {
    std::string text = rng() % 2 ? "-" : "";
    int length = 1 + static_cast<int>(rng() % 18);
    int point = static_cast<int>(rng() % (length + 2)) - 1;  // -1 or past the end: none
    for (int d = 0; d < length; d++) {
      if (d == point) text.push_back('.');
      text.push_back(digits[rng() % 10]);
    }
    same(text);
  }
  for (const char* text : {"", "-", ".", "-.", "1.2.3", "1-", "1 ", " 1", "--1", "1e", "abc"}) {
    EXPECT_EQ(ParseDouble(text), std::nullopt) << text;
  }
}

TEST(ParseDoubleTest, InfinityAllowedByDefault) {
  auto pos = ParseDouble("inf");
  ASSERT_TRUE(pos.has_value());
  EXPECT_TRUE(std::isinf(*pos) && *pos > 0);
  auto plus = ParseDouble("+inf");
  ASSERT_TRUE(plus.has_value());
  EXPECT_TRUE(std::isinf(*plus) && *plus > 0);
  auto neg = ParseDouble("-inf");
  ASSERT_TRUE(neg.has_value());
  EXPECT_TRUE(std::isinf(*neg) && *neg < 0);
}

TEST(ParseDoubleTest, InfinityRejectedWhenNotAllowed) {
  EXPECT_EQ(ParseDouble("inf", false), std::nullopt);
  EXPECT_EQ(ParseDouble("-inf", false), std::nullopt);
  EXPECT_EQ(ParseDouble("1.5", false), 1.5);
}

TEST(ParseDoubleTest, RejectsOverflowAndUnderflow) {
  // Redis string2d: "1e400" is not a valid float (ZADD replies "not a valid float").
  EXPECT_EQ(ParseDouble("1e400"), std::nullopt);
  EXPECT_EQ(ParseDouble("-1e400"), std::nullopt);
  EXPECT_EQ(ParseDouble("1e-400"), std::nullopt);
}

TEST(ParseDoubleTest, RejectsNaN) {
  EXPECT_EQ(ParseDouble("nan"), std::nullopt);
  EXPECT_EQ(ParseDouble("NAN"), std::nullopt);
  EXPECT_EQ(ParseDouble("-nan"), std::nullopt);
}

TEST(ParseDoubleTest, RejectsSpacesAndGarbage) {
  EXPECT_EQ(ParseDouble(""), std::nullopt);
  EXPECT_EQ(ParseDouble(" 1"), std::nullopt);
  EXPECT_EQ(ParseDouble("1 "), std::nullopt);
  EXPECT_EQ(ParseDouble("1.0.0"), std::nullopt);
  EXPECT_EQ(ParseDouble("x"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// ParseMemory

TEST(ParseMemoryTest, PlainBytes) {
  EXPECT_EQ(ParseMemory("0"), 0);
  EXPECT_EQ(ParseMemory("512"), 512);
  EXPECT_EQ(ParseMemory("100b"), 100);
}

TEST(ParseMemoryTest, BinaryUnits) {
  EXPECT_EQ(ParseMemory("1kb"), 1024);
  EXPECT_EQ(ParseMemory("64kb"), 64 * 1024);
  EXPECT_EQ(ParseMemory("2mb"), 2 * 1024 * 1024);
  EXPECT_EQ(ParseMemory("1gb"), 1024LL * 1024 * 1024);
  EXPECT_EQ(ParseMemory("3gb"), 3LL * 1024 * 1024 * 1024);
}

TEST(ParseMemoryTest, DecimalUnits) {
  EXPECT_EQ(ParseMemory("1k"), 1000);
  EXPECT_EQ(ParseMemory("2m"), 2000000);
  EXPECT_EQ(ParseMemory("3g"), 3000000000LL);
}

TEST(ParseMemoryTest, UnitsAreCaseInsensitive) {
  EXPECT_EQ(ParseMemory("1KB"), 1024);
  EXPECT_EQ(ParseMemory("1Mb"), 1024 * 1024);
  EXPECT_EQ(ParseMemory("1gB"), 1024LL * 1024 * 1024);
  EXPECT_EQ(ParseMemory("5K"), 5000);
}

TEST(ParseMemoryTest, RejectsBadInput) {
  EXPECT_EQ(ParseMemory(""), std::nullopt);
  EXPECT_EQ(ParseMemory("kb"), std::nullopt);
  EXPECT_EQ(ParseMemory("mb"), std::nullopt);
  EXPECT_EQ(ParseMemory("abc"), std::nullopt);
  EXPECT_EQ(ParseMemory("-1"), std::nullopt);
  EXPECT_EQ(ParseMemory("-1kb"), std::nullopt);
  EXPECT_EQ(ParseMemory("1.5mb"), std::nullopt);
  EXPECT_EQ(ParseMemory("1 mb"), std::nullopt);
  EXPECT_EQ(ParseMemory(" 1"), std::nullopt);
  EXPECT_EQ(ParseMemory("1tb"), std::nullopt);
  EXPECT_EQ(ParseMemory("+1k"), std::nullopt);
  EXPECT_EQ(ParseMemory("01kb"), std::nullopt);
}

TEST(ParseMemoryTest, RejectsOverflow) {
  EXPECT_EQ(ParseMemory("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseMemory("9223372036854775807kb"), std::nullopt);
  EXPECT_EQ(ParseMemory("10000000000000gb"), std::nullopt);
  EXPECT_EQ(ParseMemory("9223372036854775808"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// FormatLongDouble / FormatDouble

TEST(FormatLongDoubleTest, TrimsTrailingZeros) {
  EXPECT_EQ(FormatLongDouble(10.5L), "10.5");
  EXPECT_EQ(FormatLongDouble(-1.25L), "-1.25");
  EXPECT_EQ(FormatLongDouble(3.0L), "3");
  EXPECT_EQ(FormatLongDouble(5.0e3L), "5000");
  EXPECT_EQ(FormatLongDouble(0.0L), "0");
}

TEST(FormatLongDoubleTest, NegativeZeroIsZero) {
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  // Rounds to "-0.000..." at 17 digits, which must also print as "0".
  EXPECT_EQ(FormatLongDouble(-1e-20L), "0");
}

TEST(FormatLongDoubleTest, ParsedDecimalsPrintBack) {
  // INCRBYFLOAT parses with long double precision, so "0.1" prints as "0.1".
  EXPECT_EQ(FormatLongDouble(*ParseLongDouble("0.1")), "0.1");
  EXPECT_EQ(FormatLongDouble(*ParseLongDouble("10.5")), "10.5");
  EXPECT_EQ(FormatLongDouble(*ParseLongDouble("3.0e3")), "3000");
  EXPECT_EQ(FormatLongDouble(1.0L / 3), "0.33333333333333333");
}

TEST(FormatLongDoubleTest, LargeValuesAreFullDecimal) {
  EXPECT_EQ(FormatLongDouble(1e20L), "100000000000000000000");
  EXPECT_EQ(FormatLongDouble(std::ldexp(1.0L, 100)), "1267650600228229401496703205376");
  std::string huge = FormatLongDouble(1e300L);
  EXPECT_EQ(huge.size(), 301u);
  EXPECT_EQ(huge.find_first_not_of("0123456789"), std::string::npos);
  EXPECT_EQ(huge[0], '1');
  // The largest finite long double still fits the formatting buffer.
  std::string max = FormatLongDouble(std::numeric_limits<long double>::max());
  EXPECT_GT(max.size(), 4900u);
  EXPECT_EQ(max.find_first_not_of("0123456789"), std::string::npos);
}

TEST(FormatLongDoubleTest, Infinity) {
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::infinity()), "inf");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::infinity()), "-inf");
}

TEST(FormatDoubleTest, IntegersAndShortFractions) {
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(3.0), "3");
  EXPECT_EQ(FormatDouble(-7.0), "-7");
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(-2.25), "-2.25");
  EXPECT_EQ(FormatDouble(123456789.0), "123456789");
}

TEST(FormatDoubleTest, UsesSeventeenSignificantDigits) {
  EXPECT_EQ(FormatDouble(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatDouble(1e20), "1e+20");
}

TEST(FormatDoubleTest, Infinity) {
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
}

// Redis writes doubles with snprintf's "%.17g"; FormatDouble must give the same text for every
// finite double: random bit patterns (every exponent), and values scores are made of.
TEST(FormatDoubleTest, MatchesPrintfsSeventeenDigitForm) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> wide(-1e6, 1e6);
  auto expect_printf_text = [](double v) {
    char buf[128];
    int len = snprintf(buf, sizeof(buf), "%.17g", v);
    ASSERT_EQ(FormatDouble(v), std::string(buf, len)) << buf;
  };
  for (int i = 0; i < 200000; i++) {
    uint64_t bits = rng();
    double v;
    memcpy(&v, &bits, sizeof(v));
    if (std::isfinite(v)) {
      ASSERT_NO_FATAL_FAILURE(expect_printf_text(v));
    }
    ASSERT_NO_FATAL_FAILURE(expect_printf_text(wide(rng)));
    ASSERT_NO_FATAL_FAILURE(expect_printf_text(std::round(wide(rng))));
  }
  for (double v : {0.0, -0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 9007199254740993.0, 1e15,
                   9999999999999998.0, 1e16, -1e16, 123456789012345680.0, -42.0}) {
    ASSERT_NO_FATAL_FAILURE(expect_printf_text(v));
  }
}

TEST(FormatDoubleTest, RoundTripsThroughParseDouble) {
  const double values[] = {0.1, 1.0 / 3, -2.5e-300, 6.02214076e23, 1e308, 4.9e-324, -123.456};
  for (double v : values) {
    std::string s = FormatDouble(v);
    auto back = ParseDouble(s);
    ASSERT_TRUE(back.has_value()) << s;
    EXPECT_EQ(*back, v) << s;
  }
}

// ---------------------------------------------------------------------------------------------
// ToLower / EqualsIgnoreCase

TEST(CaseTest, ToLowerAndEqualsIgnoreCase) {
  EXPECT_EQ(ToLower("HeLLo-123"), "hello-123");
  EXPECT_TRUE(EqualsIgnoreCase("GET", "get"));
  EXPECT_FALSE(EqualsIgnoreCase("GET", "gets"));
  EXPECT_FALSE(EqualsIgnoreCase("GET", "GEX"));
}

// ---------------------------------------------------------------------------------------------
// GlobMatch

TEST(GlobMatchTest, LiteralPatterns) {
  EXPECT_TRUE(GlobMatch("hello", "hello"));
  EXPECT_FALSE(GlobMatch("hello", "hell"));
  EXPECT_FALSE(GlobMatch("hello", "helloo"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
}

TEST(GlobMatchTest, Star) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("h*llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_FALSE(GlobMatch("h*llo", "heeeelo"));
  EXPECT_TRUE(GlobMatch("user:*:name", "user:1000:name"));
  EXPECT_FALSE(GlobMatch("user:*:name", "user:1000:mail"));
  EXPECT_TRUE(GlobMatch("abc*", "abc"));
  EXPECT_TRUE(GlobMatch("a**", "a"));
  EXPECT_TRUE(GlobMatch("**a", "a"));
  EXPECT_TRUE(GlobMatch("*a", "bba"));
  EXPECT_FALSE(GlobMatch("*a", "ab"));
}

TEST(GlobMatchTest, QuestionMark) {
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h?llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_FALSE(GlobMatch("?", ""));
  EXPECT_TRUE(GlobMatch("??", "ab"));
}

TEST(GlobMatchTest, CharacterClassesAndRanges) {
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("[a-c]", "a"));
  EXPECT_TRUE(GlobMatch("[a-c]", "b"));
  EXPECT_TRUE(GlobMatch("[a-c]", "c"));
  EXPECT_FALSE(GlobMatch("[a-c]", "d"));
  EXPECT_FALSE(GlobMatch("[a-c]", "B"));
  EXPECT_TRUE(GlobMatch("[c-a]", "b"));  // reversed ranges are swapped, as in Redis
  EXPECT_TRUE(GlobMatch("x[0-9a-f]y", "x7y"));
  EXPECT_TRUE(GlobMatch("x[0-9a-f]y", "xey"));
  EXPECT_FALSE(GlobMatch("x[0-9a-f]y", "xgy"));
}

TEST(GlobMatchTest, NegatedClasses) {
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("[^a]", "b"));
  EXPECT_FALSE(GlobMatch("[^a]", "a"));
  EXPECT_FALSE(GlobMatch("[^a-c]", "b"));
  EXPECT_TRUE(GlobMatch("[^a-c]", "z"));
}

TEST(GlobMatchTest, UnterminatedClassEndsAtPatternEnd) {
  EXPECT_TRUE(GlobMatch("a[bc", "ab"));
  EXPECT_TRUE(GlobMatch("a[bc", "ac"));
  EXPECT_FALSE(GlobMatch("a[bc", "ad"));
}

TEST(GlobMatchTest, Escapes) {
  EXPECT_TRUE(GlobMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(GlobMatch("h\\*llo", "hello"));
  EXPECT_TRUE(GlobMatch("\\?", "?"));
  EXPECT_FALSE(GlobMatch("\\?", "a"));
  EXPECT_TRUE(GlobMatch("\\[a\\]", "[a]"));
  EXPECT_FALSE(GlobMatch("\\[a\\]", "a"));
  EXPECT_TRUE(GlobMatch("[\\]]", "]"));
  EXPECT_TRUE(GlobMatch("[\\^a]", "^"));
  EXPECT_TRUE(GlobMatch("a\\\\b", "a\\b"));
  // A trailing backslash matches itself.
  EXPECT_TRUE(GlobMatch("a\\", "a\\"));
}

TEST(GlobMatchTest, NoCase) {
  EXPECT_FALSE(GlobMatch("HELLO", "hello"));
  EXPECT_TRUE(GlobMatch("HELLO", "hello", true));
  EXPECT_TRUE(GlobMatch("h*O", "HeLLo", true));
  EXPECT_TRUE(GlobMatch("H[A-Z]LLO", "hello", true));
  EXPECT_TRUE(GlobMatch("h[E]llo", "hello", true));
  EXPECT_FALSE(GlobMatch("h[^E]llo", "hello", true));
  EXPECT_TRUE(GlobMatch("maxmemory*", "MAXMEMORY-policy", true));
}

// Redis (util.c stringmatchlen) orders a range before case-folding its ends and compares an
// escaped class member exactly, even without case; CONFIG GET on redis-server 7.0 agrees.
TEST(GlobMatchTest, NoCaseClassesFollowRedis) {
  EXPECT_FALSE(GlobMatch("[Z-a]ort", "port", true));  // folds to [z-a]: an empty range
  EXPECT_TRUE(GlobMatch("[O-q]ORT", "port", true));
  EXPECT_FALSE(GlobMatch("[\\P]ort", "port", true));
  EXPECT_TRUE(GlobMatch("[\\p]ort", "port", true));
  EXPECT_TRUE(GlobMatch("[P]ort", "port", true));
}

// The empty string matches no pattern but the empty one: Redis's loop never starts, so even
// "*" fails (PSUBSCRIBE * does not receive PUBLISH "" on redis-server 7.0 either).
TEST(GlobMatchTest, EmptyTextMatchesOnlyEmptyPattern) {
  EXPECT_FALSE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_TRUE(GlobMatch("", ""));
}

TEST(GlobMatchTest, BinarySafe) {
  std::string text("a\0b", 3);
  EXPECT_TRUE(GlobMatch("a?b", text));
  EXPECT_TRUE(GlobMatch(std::string("a\0*", 3), text));
  EXPECT_FALSE(GlobMatch("a", text));
}

TEST(GlobMatchTest, PathologicalPatternFinishes) {
  const std::string text(60, 'a');
  EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*a*a*a*b", text));
  EXPECT_TRUE(GlobMatch("a*a*a*a*a*a*a*a*a*a*a", text));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b*", text));
}

TEST(GlobMatchTest, DeepNestingIsBounded) {
  // More stars than the nesting limit: must return (not overflow the stack).
  std::string pattern;
  for (int i = 0; i < 5000; i++) pattern += "*a";
  const std::string text(6000, 'a');
  GlobMatch(pattern, text);  // result unspecified past the limit; finishing is the point
  SUCCEED();
}

}  // namespace
}  // namespace basalt

namespace basalt {
namespace {

TEST(QuoteArgTest, RoundTripsAnyBytesThroughSplitArgs) {
  std::mt19937 rng(7);
  std::vector<std::string> samples = {
      "",        "plain", "two words",   "tab\there",
      "q\"uote", "it's",  "back\\slash", std::string("nul\0byte", 8)};
  for (int i = 0; i < 500; i++) {
    std::string s(rng() % 12, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 256);
    samples.push_back(s);
  }
  for (const std::string& s : samples) {
    std::vector<std::string> args;
    ASSERT_TRUE(SplitArgs(QuoteArg(s), &args)) << QuoteArg(s);
    ASSERT_EQ(args.size(), 1u) << QuoteArg(s);
    EXPECT_EQ(args[0], s);
  }
  EXPECT_EQ(QuoteArg("plain"), "plain");
  EXPECT_EQ(QuoteArg("a b"), "\"a b\"");
}

}  // namespace
}  // namespace basalt
