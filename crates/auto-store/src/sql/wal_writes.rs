//! A VFS over SQLite's own that hands the write-ahead log a commit's frames in one write.
//!
//! SQLite writes each frame of a commit to the log as two `pwrite` calls, its 24-byte header
//! and then its page, each at an offset 24 bytes off the one before it, so a commit of a dozen
//! pages is some 25 calls, each dirtying parts of two of the file's blocks. On the machines
//! this project runs on that was a third of a commit's time: 26 writes of a dozen frames and
//! their sync took twice as long as the same bytes in one write and its sync (84 + 144 µs
//! against 10 + 106 µs). SQLite offers no such gathering of its own, so this module adds it
//! the way SQLite means a VFS to be extended: a shim over the default VFS (`unix`) that
//! differs only for the log. Its file gathers writes that follow on from each other in
//! memory and writes them as one before anything can read or depend on them: before a sync,
//! a read, a truncation, a size asked, a file control, a write elsewhere in the file, closing,
//! and past [`GATHERED_MAX`] bytes. Every other file is the default VFS's own, opened by it,
//! with its own methods.
//!
//! What makes that sound is the order SQLite keeps at a commit (`sqlite3WalFrames`): it writes
//! the frames, syncs the log, and only then makes them visible to readers through the index
//! in shared memory. The sync writes what was gathered, so no reader is told of a frame that
//! is not in the file. That holds only when commits sync the log, `synchronous = FULL` or
//! `EXTRA`: [`open`] sets it, and the group writer's connection is the one that uses the VFS.
//! Frames a transaction writes before its commit (a cache that spilled) are read back by the
//! writer through the file, which writes what it gathered first.
//!
//! Written with `unsafe`, as every VFS is: SQLite calls it through C function pointers on
//! memory it allocates.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::Path;
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's name, as a connection names it when it opens.
const VFS_NAME: &CStr = c"auto-gathered";

/// The most one write of the default VFS takes: it cuts a longer one short (`seekAndWriteFd`
/// keeps the length's low 17 bits) and answers it as a full disk. A log file gathers at most
/// this much before it writes; a commit of a dozen frames is some 50 KB.
pub(crate) const GATHERED_MAX: usize = 0x1ffff;

thread_local! {
    /// How many writes the log files of this VFS have made on this thread: what the tests
    /// count (SQLite writes on the thread that calls it).
    static LOG_WRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Writes made to the logs of this VFS on this thread so far.
#[cfg(test)]
fn log_writes() -> u64 {
    LOG_WRITES.with(std::cell::Cell::get)
}

/// Opens a connection to the file at `path` through the VFS, registering it first, with its
/// commits syncing the log (see the module's doc).
pub(crate) fn open(
    path: &Path,
    flags: rusqlite::OpenFlags,
) -> rusqlite::Result<rusqlite::Connection> {
    register()?;
    let connection = rusqlite::Connection::open_with_flags_and_vfs(path, flags, VFS_NAME)?;
    connection.pragma_update(None, "synchronous", "FULL")?;
    Ok(connection)
}

/// Registers the VFS once for the process; later calls return what the first did.
fn register() -> rusqlite::Result<()> {
    static REGISTERED: OnceLock<c_int> = OnceLock::new();
    let code = *REGISTERED.get_or_init(|| {
        // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, which lives for the
        // process; ours is leaked so that it does too, as SQLite keeps a pointer to it.
        unsafe {
            let below = ffi::sqlite3_vfs_find(std::ptr::null());
            if below.is_null() {
                return ffi::SQLITE_ERROR;
            }
            let mut vfs: ffi::sqlite3_vfs = *below;
            vfs.zName = VFS_NAME.as_ptr();
            vfs.pNext = std::ptr::null_mut();
            vfs.szOsFile = c_int::try_from(real_offset())
                .ok()
                .and_then(|offset| offset.checked_add((*below).szOsFile))
                .unwrap_or(c_int::MAX);
            vfs.xOpen = Some(gathered_open);
            let vfs = Box::leak(Box::new(Shim { vfs, below }));
            ffi::sqlite3_vfs_register(&mut vfs.vfs, 0)
        }
    });
    if code == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            Some("the gathered-log VFS could not be registered".into()),
        ))
    }
}

/// The VFS: the default one's with another name, file size and `xOpen`, and the default one
/// it opens files with. `vfs` comes first, so a pointer to it is one to the whole.
#[repr(C)]
struct Shim {
    vfs: ffi::sqlite3_vfs,
    below: *mut ffi::sqlite3_vfs,
}

/// A log file: its methods (SQLite's view of the file), the default VFS's file beneath it,
/// and the writes gathered, which start at `start`. The file beneath lives in the same
/// allocation, at [`real_offset`].
#[repr(C)]
struct Gathered {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    start: i64,
    pending: Vec<u8>,
}

/// Where the default VFS's file starts within ours: past `Gathered`, aligned for anything.
fn real_offset() -> usize {
    std::mem::size_of::<Gathered>().next_multiple_of(16)
}

/// Opens a file: the log as a [`Gathered`] over the default VFS's file, every other file as
/// the default VFS's own.
unsafe extern "C" fn gathered_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite calls this with our VFS (a `Shim`), and `file` of `szOsFile` bytes.
    unsafe {
        let below = (*vfs.cast::<Shim>()).below;
        let Some(open_below) = (*below).xOpen else {
            return ffi::SQLITE_ERROR;
        };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            return open_below(below, name, file, flags, out_flags);
        }
        let real = file
            .cast::<u8>()
            .add(real_offset())
            .cast::<ffi::sqlite3_file>();
        let code = open_below(below, name, real, flags, out_flags);
        if code != ffi::SQLITE_OK {
            // "If xOpen sets pMethods, xClose is called": ours is left unset, so the file
            // beneath is closed here if its VFS left it open.
            if !(*real).pMethods.is_null()
                && let Some(close) = (*(*real).pMethods).xClose
            {
                close(real);
            }
            (*file).pMethods = std::ptr::null();
            return code;
        }
        file.cast::<Gathered>().write(Gathered {
            base: ffi::sqlite3_file {
                pMethods: &GATHERED_METHODS,
            },
            real,
            start: 0,
            pending: Vec::new(),
        });
        ffi::SQLITE_OK
    }
}

static GATHERED_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

/// The log file behind SQLite's pointer.
///
/// # Safety
/// `file` is a file this VFS opened as a log, not closed yet.
unsafe fn gathered<'f>(file: *mut ffi::sqlite3_file) -> &'f mut Gathered {
    // SAFETY: the caller's promise; SQLite uses a file from one thread at a time.
    unsafe { &mut *file.cast::<Gathered>() }
}

/// The methods of the file beneath.
///
/// # Safety
/// `real` is an open file of the default VFS.
unsafe fn methods<'m>(real: *mut ffi::sqlite3_file) -> &'m ffi::sqlite3_io_methods {
    // SAFETY: an open file's methods outlive it.
    unsafe { &*(*real).pMethods }
}

impl Gathered {
    /// Writes what was gathered, in one write.
    fn flush(&mut self) -> c_int {
        if self.pending.is_empty() {
            return ffi::SQLITE_OK;
        }
        let Ok(amount) = c_int::try_from(self.pending.len()) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        // SAFETY: `real` is open while this file is, and its methods have `xWrite`.
        let code = unsafe {
            match methods(self.real).xWrite {
                Some(write) => write(
                    self.real,
                    self.pending.as_ptr().cast::<c_void>(),
                    amount,
                    self.start,
                ),
                None => ffi::SQLITE_IOERR_WRITE,
            }
        };
        LOG_WRITES.with(|writes| writes.set(writes.get() + 1));
        self.pending.clear();
        code
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file it opened, once; its memory is ours to read until then.
    unsafe {
        let flushed = gathered(file).flush();
        let real = gathered(file).real;
        let closed = match methods(real).xClose {
            Some(close) => close(real),
            None => ffi::SQLITE_OK,
        };
        std::ptr::drop_in_place(file.cast::<Gathered>());
        if flushed != ffi::SQLITE_OK {
            flushed
        } else {
            closed
        }
    }
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: `data` holds `amount` bytes (SQLite's promise); the file is one of ours.
    unsafe {
        let this = gathered(file);
        let Ok(length) = usize::try_from(amount) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        let follows = i64::try_from(this.pending.len())
            .ok()
            .and_then(|gathered| this.start.checked_add(gathered))
            == Some(offset);
        let joins = follows && this.pending.len().saturating_add(length) <= GATHERED_MAX;
        if !this.pending.is_empty() && !joins {
            let code = this.flush();
            if code != ffi::SQLITE_OK {
                return code;
            }
        }
        if this.pending.is_empty() {
            this.start = offset;
        }
        let data = std::slice::from_raw_parts(data.cast::<u8>(), length);
        if length > GATHERED_MAX {
            // Never from SQLite (a frame is at most 64 KiB and 24 bytes): passed on as it is.
            return methods(this.real)
                .xWrite
                .map_or(ffi::SQLITE_IOERR_WRITE, |f| {
                    f(this.real, data.as_ptr().cast(), amount, offset)
                });
        }
        this.pending.extend_from_slice(data);
        ffi::SQLITE_OK
    }
}

/// Writes what was gathered, then calls the file beneath with `call`.
///
/// # Safety
/// `file` is one of ours.
unsafe fn flushed_then(
    file: *mut ffi::sqlite3_file,
    call: impl FnOnce(*mut ffi::sqlite3_file, &ffi::sqlite3_io_methods) -> c_int,
) -> c_int {
    // SAFETY: the caller's promise.
    unsafe {
        let this = gathered(file);
        let code = this.flush();
        if code != ffi::SQLITE_OK {
            return code;
        }
        call(this.real, methods(this.real))
    }
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    data: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: a file of ours; the rest is SQLite's call passed on.
    unsafe {
        flushed_then(file, |real, m| {
            m.xRead
                .map_or(ffi::SQLITE_IOERR_READ, |f| f(real, data, amount, offset))
        })
    }
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: as `read`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xTruncate
                .map_or(ffi::SQLITE_IOERR_TRUNCATE, |f| f(real, size))
        })
    }
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: as `read`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xSync.map_or(ffi::SQLITE_IOERR_FSYNC, |f| f(real, flags))
        })
    }
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: as `read`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xFileSize
                .map_or(ffi::SQLITE_IOERR_FSTAT, |f| f(real, size))
        })
    }
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    argument: *mut c_void,
) -> c_int {
    // SAFETY: as `read`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xFileControl
                .map_or(ffi::SQLITE_NOTFOUND, |f| f(real, op, argument))
        })
    }
}

/// The file beneath, for a method that neither reads nor depends on what was written.
///
/// # Safety
/// `file` is one of ours.
unsafe fn below(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    // SAFETY: the caller's promise.
    unsafe {
        let real = gathered(file).real;
        (real, methods(real))
    }
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xLock.map_or(ffi::SQLITE_IOERR_LOCK, |f| f(real, level))
    }
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xUnlock
            .map_or(ffi::SQLITE_IOERR_UNLOCK, |f| f(real, level))
    }
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xCheckReservedLock
            .map_or(ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, |f| f(real, out))
    }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xSectorSize.map_or(4096, |f| f(real))
    }
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xDeviceCharacteristics.map_or(0, |f| f(real))
    }
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: a file of ours. (SQLite maps the index through the database's file, not the
    // log's: these are passed on for completeness.)
    unsafe {
        flushed_then(file, |real, m| {
            m.xShmMap.map_or(ffi::SQLITE_IOERR_SHMMAP, |f| {
                f(real, region, size, extend, out)
            })
        })
    }
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    count: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: as `shm_map`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xShmLock
                .map_or(ffi::SQLITE_IOERR_SHMLOCK, |f| f(real, offset, count, flags))
        })
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: as `shm_map`.
    unsafe {
        flushed_then(file, |real, m| {
            if let Some(f) = m.xShmBarrier {
                f(real);
            }
            ffi::SQLITE_OK
        });
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: as `shm_map`.
    unsafe {
        flushed_then(file, |real, m| {
            m.xShmUnmap.map_or(ffi::SQLITE_OK, |f| f(real, delete))
        })
    }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: a file of ours; a fetch reads, so what was gathered is written first.
    unsafe {
        flushed_then(file, |real, m| match m.xFetch {
            Some(f) => f(real, offset, amount, out),
            None => {
                *out = std::ptr::null_mut();
                ffi::SQLITE_OK
            }
        })
    }
}

unsafe extern "C" fn unfetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    page: *mut c_void,
) -> c_int {
    // SAFETY: a file of ours.
    unsafe {
        let (real, m) = below(file);
        m.xUnfetch.map_or(ffi::SQLITE_OK, |f| f(real, offset, page))
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::OpenFlags;

    use super::*;

    /// A file in WAL mode with a table `t (x INTEGER PRIMARY KEY, y BLOB)`, opened through the
    /// default VFS; and a connection to it through this one.
    fn wal_file(dir: &Path) -> (rusqlite::Connection, rusqlite::Connection) {
        let path = dir.join("t.db");
        let plain = rusqlite::Connection::open(&path).unwrap();
        plain.pragma_update(None, "journal_mode", "WAL").unwrap();
        plain
            .execute(
                "CREATE TABLE t (x INTEGER PRIMARY KEY, y BLOB NOT NULL)",
                [],
            )
            .unwrap();
        let gathered = open(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .unwrap();
        (plain, gathered)
    }

    /// Rows `from..to` of `size` bytes each, in one transaction.
    fn insert(connection: &rusqlite::Connection, rows: std::ops::Range<i64>, size: i64) {
        let tx = connection.unchecked_transaction().unwrap();
        for x in rows {
            tx.execute("INSERT INTO t (x, y) VALUES (?1, zeroblob(?2))", [x, size])
                .unwrap();
        }
        tx.commit().unwrap();
    }

    fn rows_and_bytes(connection: &rusqlite::Connection) -> (i64, i64) {
        connection
            .query_row("SELECT count(*), total(length(y)) FROM t", [], |row| {
                Ok((row.get(0)?, row.get::<_, f64>(1)? as i64))
            })
            .unwrap()
    }

    /// A commit of a dozen pages reaches the log in one write, and another connection, through
    /// the default VFS, reads it at once.
    #[test]
    fn a_commits_frames_reach_the_log_in_one_write() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, gathered) = wal_file(dir.path());
        for round in 0..20 {
            let before = log_writes();
            insert(&gathered, round * 12..(round + 1) * 12, 3000);
            assert_eq!(log_writes() - before, 1, "round {round}");
            assert_eq!(
                rows_and_bytes(&plain),
                ((round + 1) * 12, (round + 1) * 12 * 3000)
            );
        }
    }

    /// A transaction larger than what a log file gathers is written in pieces, none longer
    /// than the default VFS takes; one larger than the page cache spills frames before its
    /// commit and reads them back. Through thousands of commits, checkpoints and restarts of
    /// the log, every reader sees every commit, and the file stays whole.
    #[test]
    fn large_and_many_commits_stay_whole_through_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, gathered) = wal_file(dir.path());
        gathered.pragma_update(None, "cache_size", 20).unwrap();
        let before = log_writes();
        insert(&gathered, 0..400, 3000);
        let pieces = log_writes() - before;
        let least = (400 * 4120_u64).div_ceil(GATHERED_MAX as u64);
        assert!(pieces >= least, "{pieces} writes for 1.6 MB");
        assert_eq!(rows_and_bytes(&plain), (400, 400 * 3000));
        for x in 400..2400 {
            insert(&gathered, x..x + 1, 3000);
            if x % 97 == 0 {
                assert_eq!(rows_and_bytes(&plain), (x + 1, (x + 1) * 3000));
            }
        }
        let checked: String = plain
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(checked, "ok");
    }

    /// The log as a crash leaves it, copied while the connection is open and nothing is
    /// checkpointed, is recovered whole by SQLite's own reader: every frame and checksum is
    /// as SQLite would have written them.
    #[test]
    fn a_log_left_by_a_crash_is_recovered_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, gathered) = wal_file(dir.path());
        plain.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        gathered
            .pragma_update(None, "wal_autocheckpoint", 0)
            .unwrap();
        for round in 0..30 {
            insert(&gathered, round * 7..(round + 1) * 7, 2500);
        }
        let copy = tempfile::tempdir().unwrap();
        for name in ["t.db", "t.db-wal"] {
            std::fs::copy(dir.path().join(name), copy.path().join(name)).unwrap();
        }
        let recovered = rusqlite::Connection::open(copy.path().join("t.db")).unwrap();
        assert_eq!(rows_and_bytes(&recovered), (210, 210 * 2500));
        let checked: String = recovered
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(checked, "ok");
    }
}
