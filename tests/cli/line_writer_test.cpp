// LineWriter hands the descriptor whole lines: nothing of a line before its newline, so that
// another writer's output can fall between lines but never inside one.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>

#include <string>

#include "cli/line_writer.h"

namespace {

// What the pipe holds now, without waiting.
std::string drain(int fd) {
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  return got;
}

TEST(LineWriter, WritesWholeLinesOnly) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
  {
    gatecheck::LineWriter out(p[1]);
    out << "host@cpu  " << 25 << "  pass";
    EXPECT_EQ(drain(p[0]), "") << "a piece of a line reached the descriptor";
    out << "\nseed " << 1 << ", ";
    EXPECT_EQ(drain(p[0]), "host@cpu  25  pass\n");
    out << "0 failed";
    out.flush();  // the report's last piece, ended or not, is written at a flush
    EXPECT_EQ(drain(p[0]), "seed 1, 0 failed");
    out << "tail";
  }  // and at the end
  EXPECT_EQ(drain(p[0]), "tail");
  close(p[0]);
  close(p[1]);
}

TEST(LineWriter, AFailedWriteSetsTheStreamsState) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  close(p[0]);  // no reader: write fails (EPIPE; SIGPIPE ignored here)
  signal(SIGPIPE, SIG_IGN);
  gatecheck::LineWriter out(p[1]);
  out << "lost\n";
  EXPECT_FALSE(out.good());
  close(p[1]);
}

}  // namespace
