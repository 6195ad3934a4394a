import API
import HummingbirdTesting
import Testing

/// Follows an import task to its end: the import runs on its own thread, so this waits on its status (never on a
/// clock alone; the bound is only there to turn a hang into a failure that says what was awaited).
func finishedImport(_ client: some TestClientProtocol, _ id: String) async throws -> Answers.ImportTask? {
    for _ in 0..<6_000 {
        let task = try decode(Answers.ImportTask.self, try await client.execute(uri: "/v1/tasks/\(id)", method: .get))
        if task.status == "succeeded" || task.status == "failed" { return task }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("import task \(id) did not finish within 60 s")
    return nil
}
