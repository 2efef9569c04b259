// flakesense confirm's runs for the JUnit Platform: runs the selected test methods a batch of times
// in one JVM through the Launcher API, so that the JVM's start-up (often most of a run's time) is
// paid once per batch. Each run loads the test classes afresh, in a class loader of its own, as the
// console launcher loads them from its --class-path: static fields of the tests and of the code
// they test start over in every run; what the JVM itself holds (system properties, threads left
// running) carries over within a batch. With EXECUTIONS 2 (flakesense's `twice`) a run executes
// the selection two times in its class loader, static state kept: a test that passes once and then
// fails is non-idempotent (a polluter of itself). Each execution's legacy XML report goes to
// REPORTS/run-R/execution-E. READY is made once the JVM is up: flakesense starts its noise then.
//
// Usage: java -cp <this>:<console launcher> FlakesenseRuns REPORTS RUNS EXECUTIONS READY CLASSPATH METHOD...
// where CLASSPATH is the tests' class path (entries separated by the path separator, `dir/*` for
// the jars in a directory) and METHOD is `pkg.Class#method` as the console launcher's
// --select-method takes it.

import java.io.File;
import java.io.PrintWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.reporting.legacy.xml.LegacyXmlReportGeneratingListener;

public final class FlakesenseRuns {
    private FlakesenseRuns() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: FlakesenseRuns REPORTS RUNS EXECUTIONS READY CLASSPATH METHOD...");
            System.exit(2);
        }
        Path reports = Paths.get(args[0]);
        int runs = Integer.parseInt(args[1]);
        int executions = Integer.parseInt(args[2]);
        Path ready = Paths.get(args[3]);
        URL[] classpath = classpath(args[4]);
        Files.createDirectories(reports);
        Files.write(ready, new byte[0]);
        PrintWriter out = new PrintWriter(System.err, true);
        Thread thread = Thread.currentThread();
        ClassLoader original = thread.getContextClassLoader();
        for (int run = 1; run <= runs; run++) {
            try (URLClassLoader loader = new URLClassLoader(classpath, original)) {
                thread.setContextClassLoader(loader);
                List<DiscoverySelector> selectors = new ArrayList<>();
                for (int i = 5; i < args.length; i++) {
                    selectors.add(DiscoverySelectors.selectMethod(args[i]));
                }
                LauncherDiscoveryRequest request =
                        LauncherDiscoveryRequestBuilder.request().selectors(selectors).build();
                Launcher launcher = LauncherFactory.create();
                for (int execution = 1; execution <= executions; execution++) {
                    Path directory = reports.resolve("run-" + run).resolve("execution-" + execution);
                    launcher.execute(request, new LegacyXmlReportGeneratingListener(directory, out));
                }
            } finally {
                thread.setContextClassLoader(original);
            }
        }
    }

    /** The class path's entries as URLs, `dir/*` as the jars in the directory. */
    private static URL[] classpath(String text) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : text.split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            if (entry.endsWith("*")) {
                File directory = new File(entry.substring(0, entry.length() - 1));
                File[] jars = directory.listFiles((dir, name) -> name.endsWith(".jar") || name.endsWith(".JAR"));
                if (jars != null) {
                    java.util.Arrays.sort(jars);
                    for (File jar : jars) {
                        urls.add(jar.toURI().toURL());
                    }
                }
            } else {
                urls.add(new File(entry).toURI().toURL());
            }
        }
        return urls.toArray(new URL[0]);
    }
}
