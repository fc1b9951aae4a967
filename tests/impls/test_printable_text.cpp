// printable_text: what a plugin's last_error() says reaches a terminal and a
// report's JSON as text, whatever its bytes.
#include <gtest/gtest.h>

#include "harness/impls/printable_text.h"

using gatecheck::printable_text;

TEST(PrintableText, KeepsUtf8NewlinesAndTabs) {
  const std::string s = "index[3] = 9 \xe2\x89\xa5 gates (\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80)\n\tsecond line";
  EXPECT_EQ(printable_text(s), s);
}

TEST(PrintableText, EscapesWhatIsNotUtf8) {
  EXPECT_EQ(printable_text("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(printable_text("\xc3"), "\\xc3");                   // cut short
  EXPECT_EQ(printable_text("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(printable_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable_text("\x80\xe2\x82\xac"), "\\x80\xe2\x82\xac");     // a stray byte, then a euro sign
}

TEST(PrintableText, EscapesControlCharacters) {
  EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m\a\r\x7f"), "\\x1b[31mred\\x1b[0m\\x07\\x0d\\x7f");
  EXPECT_EQ(printable_text("\xc2\x9b" "2J"), "\\xc2\\x9b2J");  // C1's CSI
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
}

TEST(PrintableText, CutsLongTextAtACharacterAndSaysHowMuch) {
  EXPECT_EQ(printable_text(std::string(10, 'x'), 4), "xxxx... (6 more bytes left out)");
  EXPECT_EQ(printable_text("ab\xe2\x82\xac", 4), "ab... (3 more bytes left out)");  // not half a euro sign
  EXPECT_EQ(printable_text("ab\x1b", 4), "ab... (1 more bytes left out)");          // nor half an escape
  EXPECT_EQ(printable_text(std::string(4096, 'y')), std::string(4096, 'y'));
}
