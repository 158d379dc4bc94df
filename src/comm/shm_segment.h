// ShmSegment: one POSIX shared-memory object mapped into this process. Every segment coretrain creates starts
// with a 4 KiB header page (magic, creator pid) so a later job can tell a crashed job's leftover (creator
// dead) from a live one and remove it. Names are "/ct-<job>-<nonce>-..." so two jobs on one host never
// collide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ct::comm {

class ShmSegment {
 public:
  static constexpr size_t kHeaderBytes = 4096;
  static constexpr uint64_t kMagic = 0x3176656d68735443ull;  // "CTshmev1"

  ShmSegment() = default;
  // Creates name (exclusive) with payload_bytes after the header page; fails naming the segment if it exists.
  static ShmSegment create(const std::string& name, size_t payload_bytes);
  // Opens an existing segment and maps it whole; false if it does not exist (yet) or is not initialised yet.
  static bool try_open(const std::string& name, ShmSegment& out);
  ~ShmSegment();
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Removes the name (mappings stay valid); idempotent.
  void unlink();
  bool mapped() const { return base_ != nullptr; }
  const std::string& name() const { return name_; }
  // The payload (after the header page), 4 KiB aligned.
  uint8_t* data() const { return base_ + kHeaderBytes; }
  size_t payload_bytes() const { return size_ - kHeaderBytes; }

 private:
  std::string name_;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;
};

// True if pid is gone (no such process, or a zombie waiting to be reaped).
bool pid_dead(int pid);

// Removes /dev/shm/ct-* segments whose creator is dead (and unfinished ones older than a minute). Returns the
// names removed. Called by each node's first rank at startup.
std::vector<std::string> remove_leftover_segments();

// Component of a segment name from a job id: [A-Za-z0-9_.-] kept, the rest '_', at most 24 characters.
std::string shm_name_part(const std::string& s);

}  // namespace ct::comm
