// PGlite (PostgreSQL in WebAssembly) behind the real wire protocol, for goldpan's tests.
// Loads pgvector and pg_textsearch, listens on 127.0.0.1 on the port given (0: any free
// one), prints one line `listening PORT` once it accepts connections, and stops on
// SIGTERM or SIGINT or when its standard input closes (so a killed test leaves nothing).
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { vector } from '@electric-sql/pglite-pgvector'
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch'

const port = Number(process.argv[2] ?? 0)
const db = await PGlite.create({ extensions: { vector, pg_textsearch } })
const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1' })
server.addEventListener('listening', (event) => {
  process.stdout.write(`listening ${event.detail.port}\n`)
})
await server.start()

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await server.stop()
  await db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.resume()
