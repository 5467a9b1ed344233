#include "baton/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "stderr_capture.h"

namespace {

using testing::HasSubstr;

class LogTest : public testing::Test {
 protected:
  void SetUp() override {
    saved_ = baton::log_level();
    baton::set_log_prefix("");
  }
  void TearDown() override {
    baton::set_log_level(saved_);
    baton::set_log_prefix("");
  }
  baton::LogLevel saved_ = baton::LogLevel::kInfo;
};

TEST_F(LogTest, ParsesTheFourLevelsAndNothingElse) {
  baton::LogLevel level = baton::LogLevel::kError;
  for (const char* name : {"error", "warn", "info", "debug"}) {
    ASSERT_TRUE(baton::parse_log_level(name, &level)) << name;
    EXPECT_STREQ(baton::log_level_name(level), name);
  }
  level = baton::LogLevel::kWarn;
  EXPECT_FALSE(baton::parse_log_level("verbose", &level));
  EXPECT_FALSE(baton::parse_log_level("INFO", &level));
  EXPECT_EQ(level, baton::LogLevel::kWarn);  // untouched
}

TEST_F(LogTest, ALineHasThePrefixLevelAndComponent) {
  baton::set_log_level(baton::LogLevel::kInfo);
  baton::set_log_prefix("rank 3");
  baton_test::StderrCapture capture;
  BATON_LOG_INFO("gloo", "connected to " << 2 << " peers");
  BATON_LOG_ERROR("runtime", "step failed");
  const std::string text = capture.text();
  EXPECT_THAT(text, HasSubstr("[rank 3] info  gloo: connected to 2 peers\n"));
  EXPECT_THAT(text, HasSubstr("[rank 3] error runtime: step failed\n"));
}

TEST_F(LogTest, LinesBelowTheLevelAreNotEvenBuilt) {
  baton::set_log_level(baton::LogLevel::kWarn);
  int built = 0;
  auto count = [&built] { return ++built; };
  baton_test::StderrCapture capture;
  BATON_LOG_INFO("x", "info " << count());
  BATON_LOG_DEBUG("x", "debug " << count());
  BATON_LOG_WARN("x", "warn " << count());
  const std::string text = capture.text();
  EXPECT_EQ(built, 1);
  EXPECT_THAT(text, HasSubstr("warn  x: warn 1"));
  EXPECT_THAT(text, testing::Not(HasSubstr("info")));
}

TEST_F(LogTest, LinesOfConcurrentThreadsNeverInterleave) {
  baton::set_log_level(baton::LogLevel::kInfo);
  baton_test::StderrCapture capture;
  std::vector<std::thread> threads;
  const std::string payload(300, 'x');
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &payload] {
      for (int i = 0; i < 200; ++i) BATON_LOG_INFO("t", t << " " << payload << " end");
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string text = capture.text();
  std::size_t lines = 0, start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    ASSERT_THAT(line, testing::MatchesRegex("info  t: [0-3] x+ end")) << line.substr(0, 80);
    ++lines;
  }
  EXPECT_EQ(lines, 800u);
}

}  // namespace
