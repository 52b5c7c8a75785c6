import LFSyncContent

/// The schema of `lfsync.sqlite`: every table of the Store layer, in one file
/// so that one transaction can span them and one `user_version` describes them.
enum StateSchema {
    package static let migrations = Migrations([
        Migration(version: 1, name: "initial", sql: """
            -- A library is the folder a scan starts from. Paths below are relative
            -- to it, so the scan cache and chunk index are scoped per library: two
            -- libraries may both contain "IMG_0001.HEIC".
            CREATE TABLE library (
                id   INTEGER PRIMARY KEY,
                root TEXT NOT NULL UNIQUE
            );

            -- (path, size, mtime_ns, inode) -> manifest: lets a rescan skip reading
            -- unchanged files. Unsigned values are stored by bit pattern.
            CREATE TABLE scan_cache (
                library_id INTEGER NOT NULL REFERENCES library(id) ON DELETE CASCADE,
                path       TEXT    NOT NULL,
                size       INTEGER NOT NULL,
                mtime_ns   INTEGER NOT NULL,
                inode      INTEGER NOT NULL,
                manifest   BLOB    NOT NULL,  -- FileManifest.encoded()
                -- Apple Live Photo content identifier read from the file's metadata,
                -- cached so that grouping an unchanged library reads no file either.
                content_identifier TEXT,
                PRIMARY KEY (library_id, path)
            );

            -- The content-addressed store is an index over files already in the
            -- library: chunk hash -> (file, offset, length) plus the file's
            -- validity stamp. Readers re-verify every chunk they copy.
            CREATE TABLE chunk_file (
                id         INTEGER PRIMARY KEY,
                library_id INTEGER NOT NULL REFERENCES library(id) ON DELETE CASCADE,
                path       TEXT    NOT NULL,
                size       INTEGER NOT NULL,
                mtime_ns   INTEGER NOT NULL,
                inode      INTEGER NOT NULL,
                UNIQUE (library_id, path)
            );
            CREATE TABLE chunk_location (
                file_id     INTEGER NOT NULL REFERENCES chunk_file(id) ON DELETE CASCADE,
                byte_offset INTEGER NOT NULL,
                length      INTEGER NOT NULL,
                hash        BLOB    NOT NULL,  -- 32 bytes of BLAKE2b-256
                PRIMARY KEY (file_id, byte_offset)
            ) WITHOUT ROWID;
            CREATE INDEX chunk_location_by_hash ON chunk_location (hash);

            -- The per-(content, peer) ledger. Keyed peer first: every bulk query
            -- is "everything about this peer". No CHECK on state: readers treat
            -- unknown text as "no record" anyway, and a CHECK cannot be altered
            -- when a state is added later.
            CREATE TABLE sync_state (
                peer          TEXT    NOT NULL,
                content_id    BLOB    NOT NULL,  -- 32 bytes
                state         TEXT    NOT NULL,  -- SyncState.rawValue
                reason        TEXT,
                bytes         INTEGER,
                updated_at_ms INTEGER NOT NULL,  -- Unix time, milliseconds
                PRIMARY KEY (peer, content_id)
            ) WITHOUT ROWID;
            """),
        Migration(version: 2, name: "scan cache ctime", sql: """
            -- The ctime a file had when its manifest was hashed (or received), so an
            -- edit that keeps size and mtime is still noticed. NULL: unknown, or the
            -- file changed too close to its hashing to trust (see LibraryScanner);
            -- such a row never matches, and the file is hashed again.
            ALTER TABLE scan_cache ADD COLUMN ctime_ns INTEGER;
            """),
        Migration(version: 3, name: "scan cache chunk list provenance", sql: """
            -- 1 for a received file whose chunk list is the sender's word (only its file
            -- hash was verified): such a row proves the file is in place, but when this
            -- device sends the file on, each chunk is checked against the list.
            ALTER TABLE scan_cache ADD COLUMN chunk_list_unverified INTEGER NOT NULL DEFAULT 0;
            """),
        Migration(version: 4, name: "keyed content hashes", sql: """
            -- Content is named by keyed hashes now, and a file by a hash of its chunk list
            -- (PROTOCOL.md, "Hashes"): every cached manifest and chunk row names bytes by the
            -- old hashes and is dropped. The libraries they described are remembered here:
            -- the next use of each re-indexes it and carries its ledger rows over to the new
            -- content IDs (LibraryHashUpgrade). The ledger's rows stay as they are until then.
            -- The old rows' whole-file hashes are kept until then, so that the upgrade can
            -- still tell a file that changed without a new size or mtime (bit rot) from one
            -- that did not. (chunk_list_unverified is no longer written: every received
            -- chunk is verified.)
            CREATE TABLE hash_upgrade (
                library_id INTEGER PRIMARY KEY REFERENCES library(id) ON DELETE CASCADE
            );
            INSERT INTO hash_upgrade
                SELECT library_id FROM scan_cache UNION SELECT library_id FROM chunk_file;
            CREATE TABLE legacy_scan_cache (
                library_id INTEGER NOT NULL REFERENCES library(id) ON DELETE CASCADE,
                path       TEXT    NOT NULL,
                size       INTEGER NOT NULL,
                mtime_ns   INTEGER NOT NULL,
                manifest   BLOB    NOT NULL,  -- FileManifest version 1: the file hash of its bytes
                PRIMARY KEY (library_id, path)
            ) WITHOUT ROWID;
            INSERT INTO legacy_scan_cache SELECT library_id, path, size, mtime_ns, manifest FROM scan_cache;
            DELETE FROM chunk_location;
            DELETE FROM chunk_file;
            DELETE FROM scan_cache;
            """),
        Migration(version: 5, name: "runs own their rows in flight", sql: """
            -- A row in flight belongs to the run (the process) that wrote it. Once that run
            -- is gone (it crashed, or was killed), readers see the row as interrupted, not in
            -- flight: nothing is working on it any more. A run is named by its PID, the boot
            -- it ran in and the kernel's start time of that PID (LedgerRun), which no later
            -- process shares. Rows in flight from before this version have no run.
            CREATE TABLE ledger_run (
                id      INTEGER PRIMARY KEY,
                pid     INTEGER NOT NULL,
                boot    TEXT    NOT NULL,
                started INTEGER NOT NULL
            );
            ALTER TABLE sync_state ADD COLUMN run INTEGER;
            CREATE INDEX sync_state_by_run ON sync_state (run) WHERE run IS NOT NULL;
            """),
        Migration(version: 6, name: "offloaded files", sql: """
            -- Files `lfsync offload` deleted from a library because enough other devices
            -- verifiably held their asset: one row per file, written (and committed) before
            -- the file is removed, so a crash leaves every file present or recorded here.
            -- A row goes once the file is back (a pull brought it) or the user says so.
            CREATE TABLE offloaded (
                library    TEXT    NOT NULL,  -- the library's root, as the command resolved it
                path       TEXT    NOT NULL,  -- library-relative, bytes as scanned
                content_id BLOB    NOT NULL,  -- the asset's content ID, 32 bytes
                size       INTEGER NOT NULL,
                holders    TEXT    NOT NULL,  -- Device IDs that proved they held it, space-separated
                at_ms      INTEGER NOT NULL,  -- Unix time, milliseconds
                PRIMARY KEY (library, path)
            ) WITHOUT ROWID;
            CREATE INDEX offloaded_by_content ON offloaded (content_id);
            """),
        Migration(version: 7, name: "synced rows by content", sql: """
            -- A holding check asks, per content, when any device last confirmed it: without
            -- this, each such question reads every row of the ledger.
            CREATE INDEX sync_state_synced_by_content ON sync_state (content_id, updated_at_ms) WHERE state = 'synced';
            """),
        Migration(version: 8, name: "offloaded files keep their manifests", sql: """
            -- What a pull needs to put each offloaded file back at its own path, whatever path
            -- the holder keeps the content at: the file's manifest (its file hash and chunk
            -- list), so the file is rebuilt chunk by chunk and its record goes only when that
            -- path holds that file hash again. NULL for rows written before this version.
            ALTER TABLE offloaded ADD COLUMN manifest BLOB;
            """),
        Migration(version: 9, name: "what received contents are made of", sql: """
            -- Per content this device received, its files by role and file hash, in the
            -- content's canonical order: what lets it answer a holding check for a content it
            -- keeps at other paths (a Live Photo stored under conflict names, a renamed file)
            -- by finding each file hash in the library, whatever the grouping of its names.
            CREATE TABLE content_file (
                content_id BLOB    NOT NULL,  -- 32 bytes
                position   INTEGER NOT NULL,  -- the file's place in the canonical order
                role       INTEGER NOT NULL,  -- FileRole's byte
                file_hash  BLOB    NOT NULL,  -- 32 bytes
                PRIMARY KEY (content_id, position)
            ) WITHOUT ROWID;
            """),
        Migration(version: 10, name: "path history", sql: """
            -- Per library, each path's current version (PROTOCOL.md, "Path versions"): its
            -- file hash (NULL once deleted), its version vector and who made it when, and the
            -- library's own change counter (seq) at which this device last changed the row,
            -- so a peer asks only for what changed since it last asked. A library's history
            -- has a random ID: a peer that remembered how far it read an older history (this
            -- ledger was deleted and rebuilt) starts again from the beginning.
            CREATE TABLE history_library (
                id         INTEGER PRIMARY KEY,
                library    TEXT    NOT NULL UNIQUE,  -- the library's key (its real path)
                history_id INTEGER NOT NULL,
                last_seq   INTEGER NOT NULL
            );
            CREATE TABLE path_history (
                library_id    INTEGER NOT NULL REFERENCES history_library(id) ON DELETE CASCADE,
                path          TEXT    NOT NULL,
                file_hash     BLOB,              -- 32 bytes; NULL: the path was deleted
                vector        BLOB    NOT NULL,  -- VersionVector.encoded()
                changed_at_ms INTEGER NOT NULL,
                changed_by    INTEGER NOT NULL,  -- DeviceShortID, by bit pattern
                retained_hash BLOB,              -- a file kept here whose deletion was not applied
                seq           INTEGER NOT NULL,
                PRIMARY KEY (library_id, path)
            ) WITHOUT ROWID;
            -- No index by seq: a peer's "what changed since" reads the library's rows once
            -- (a top-N sort), which costs less than storing every path a second time.
            -- How far this device has applied each peer's history of a library.
            CREATE TABLE path_progress (
                library_id INTEGER NOT NULL REFERENCES history_library(id) ON DELETE CASCADE,
                peer       TEXT    NOT NULL,
                history_id INTEGER NOT NULL,
                seq        INTEGER NOT NULL,
                PRIMARY KEY (library_id, peer)
            ) WITHOUT ROWID;
            -- Files a sync moved out of a path into the library's versions area
            -- (.lfsync/versions): what `lfsync versions` lists and `restore` puts back.
            CREATE TABLE kept_version (
                library_id INTEGER NOT NULL REFERENCES history_library(id) ON DELETE CASCADE,
                stored     TEXT    NOT NULL,  -- its name under .lfsync/versions
                path       TEXT    NOT NULL,  -- the library path it was at
                file_hash  BLOB    NOT NULL,
                size       INTEGER NOT NULL,
                kept_at_ms INTEGER NOT NULL,
                reason     TEXT    NOT NULL,  -- replaced, deleted, restored
                by_device  TEXT    NOT NULL,  -- the device whose change moved it (its name or ID)
                PRIMARY KEY (library_id, stored)
            ) WITHOUT ROWID;
            CREATE INDEX kept_version_by_path ON kept_version (library_id, path);
            """),
    ])
}
