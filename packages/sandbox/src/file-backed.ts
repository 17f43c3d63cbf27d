// The file half of the isolating sandboxes: their workspace is a host folder mounted inside, so
// files, tar transfers and snapshots go through one confined FileApi, refused once destroyed.
import type { FileApi } from "./files.js";

export abstract class FileBackedSandbox {
  abstract readonly id: string;
  protected abstract readonly files: FileApi;
  protected destroyed = false;

  protected assertAlive(): void {
    if (this.destroyed) throw new Error(`sandbox ${this.id} has been destroyed`);
  }

  readFile(path: string): Promise<Buffer> {
    this.assertAlive();
    return this.files.readFile(path);
  }

  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    this.assertAlive();
    return this.files.writeFile(path, data);
  }

  /** Packs a folder of the workspace as a tar archive. */
  download(path = "."): Promise<Buffer> {
    this.assertAlive();
    return this.files.packTar(path);
  }

  /** Unpacks a tar archive into a folder of the workspace (entries leaving it are refused). */
  upload(path: string, tar: Uint8Array): Promise<void> {
    this.assertAlive();
    return this.files.unpackTar(path, tar);
  }

  /** The workspace as a tar archive: the writable state that matters outlives the session. */
  snapshot(): Promise<Buffer> {
    return this.download(".");
  }

  async restore(tar: Uint8Array): Promise<void> {
    this.assertAlive();
    await this.files.replaceWithTar(tar);
  }
}
