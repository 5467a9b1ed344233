#include "baton/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

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

// A file an earlier run may have left (remembered cuts, earlier metrics): absent is nothing,
// present is read whole, and anything else there — a FIFO, a folder, a dangling link — is
// refused as read_file refuses it, not taken for absent.
TEST(Files, AFileThatMayBeAbsentIsNothingWhenAbsentAndRefusedWhenNotAFile) {
  const std::string folder = ::testing::TempDir() + "/files-if-present";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  EXPECT_FALSE(baton::read_file_if_present(folder + "/absent", "earlier metrics").has_value());
  baton::write_file_atomically(folder + "/present", "3 5\n");
  EXPECT_EQ(baton::read_file_if_present(folder + "/present", "earlier metrics").value(), "3 5\n");
  const std::string fifo = folder + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_symlink(folder + "/nowhere", folder + "/dangling");
  for (const std::string& path : {fifo, folder, folder + "/dangling"}) {
    try {
      baton::read_file_if_present(path, "earlier metrics");
      ADD_FAILURE() << "took " << path << " for a file or for nothing";
    } catch (const baton::Error& error) {
      EXPECT_THAT(error.what(), HasSubstr("cannot read earlier metrics '" + path + "'"));
    }
  }
}

// The one way baton opens what a user names: nothing that is not a regular file is read
// (a FIFO would block, /dev/zero never end), a size bound is applied before reading, and a
// file that shrinks while in use is an error naming it (a memory map would be SIGBUS).
TEST(Files, OnlyRegularFilesAreReadAndNeverMoreThanTheBound) {
  const std::string folder = ::testing::TempDir() + "/readable-files";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::string fifo = folder + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {fifo, "it is a FIFO (a named pipe)"},
      {folder, "it is a directory"},
      {"/dev/zero", "it is a character device"},
  };
  for (const auto& [path, why] : refused) {
    try {
      baton::read_file(path, "token file");
      FAIL() << "read " << path;
    } catch (const baton::Error& error) {
      EXPECT_THAT(error.what(), HasSubstr("cannot read token file '" + path + "': " + why));
    }
    EXPECT_THAT(baton::non_regular_kind(path), HasSubstr(why.substr(6)));
  }
  EXPECT_EQ(baton::non_regular_kind(folder + "/missing"), "");

  // A sparse file larger than the machine's memory is refused by its size, not read.
  const std::string sparse = folder + "/sparse.pt";
  const std::uint64_t huge = baton::machine_memory_bytes() + (1ull << 30);
  baton::write_file_atomically(sparse, "");
  std::filesystem::resize_file(sparse, huge);
  try {
    baton::read_file(sparse, "checkpoint file");
    FAIL() << "read a sparse file larger than memory";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("it is " + std::to_string(huge) + " bytes, more than"));
  }
  EXPECT_THROW(baton::read_file(sparse, "checkpoint file", 1 << 20), baton::Error);

  // Shrunk while open: the read names the file and the byte it ended at.
  const std::string shrinking = folder + "/tokens.bin";
  baton::write_file_atomically(shrinking, std::string(4096, 'x'));
  const baton::ReadableFile file = baton::ReadableFile::open(shrinking, "data.tokens");
  std::filesystem::resize_file(shrinking, 100);
  char bytes[64];
  file.read_at(0, bytes, sizeof bytes);
  try {
    file.read_at(2048, bytes, sizeof bytes);
    FAIL() << "read past the end of a shrunk file";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot read data.tokens '" + shrinking +
                                        "': it ends at byte 2048, where 4096 bytes were there"));
  }
  std::filesystem::remove_all(folder);
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
