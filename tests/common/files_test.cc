#include "baton/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "baton/error.h"

namespace {

using testing::HasSubstr;

TEST(Files, WrittenAtomicallyAndReadBackWhole) {
  const std::string path = ::testing::TempDir() + "/files-test.bin";
  std::string contents(1 << 20, '\0');
  for (std::size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 7);
  baton::write_file_atomically(path, contents);
  EXPECT_EQ(baton::read_file(path, "test file"), contents);
  baton::write_file_atomically(path, "short");
  EXPECT_EQ(baton::read_file(path, "test file"), "short");
  // No temporary file is left beside it.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    entries += entry.path().filename().string().rfind("files-test.bin", 0) == 0;
  }
  EXPECT_EQ(entries, 1);
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(Files, AMissingFileIsNamedWithWhatItIsAndWhy) {
  try {
    baton::read_file("/no/such/file.json", "checkpoint manifest");
    FAIL() << "read a missing file";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot read checkpoint manifest '/no/such/file.json': "
                                        "No such file or directory"));
  }
}

TEST(Files, AnUnwritableFolderIsAnErrorNamingThePath) {
  try {
    baton::write_file_atomically("/no/such/folder/out.txt", "x");
    FAIL() << "wrote into a missing folder";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("/no/such/folder/out.txt"));
  }
}

}  // namespace
