// flakesense confirm's `twice` condition for the JUnit Platform: runs the selected test methods two
// times in one JVM through the Launcher API, writing the legacy XML report of each pass to its own
// directory (`first`, `second`). Static state survives between the passes, as it does between tests
// of one suite, so a test that passes once and then fails is non-idempotent (a polluter of itself).
//
// Usage: java -cp <this>:<console launcher>:<test classpath> FlakesenseTwice REPORTS METHOD...
// where METHOD is `pkg.Class#method` as the console launcher's --select-method takes it.

import java.io.PrintWriter;
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

public final class FlakesenseTwice {
    private FlakesenseTwice() {}

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: FlakesenseTwice REPORTS METHOD...");
            System.exit(2);
        }
        Path reports = Paths.get(args[0]);
        List<DiscoverySelector> selectors = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            selectors.add(DiscoverySelectors.selectMethod(args[i]));
        }
        LauncherDiscoveryRequest request =
                LauncherDiscoveryRequestBuilder.request().selectors(selectors).build();
        Launcher launcher = LauncherFactory.create();
        PrintWriter out = new PrintWriter(System.err, true);
        for (String pass : new String[] {"first", "second"}) {
            launcher.execute(request, new LegacyXmlReportGeneratingListener(reports.resolve(pass), out));
        }
    }
}
